package dev.pagewarden.core.receipt;

/**
 * One cached prefix page a request's prefill reused instead of computing it (a version 4 receipt lists them).
 *
 * @param worker         the pool that holds the cache ("prefill-0")
 * @param page           physical page number in that pool
 * @param epoch          the page's epoch: the writer's allocation, kept while cached
 * @param positionFrom   first prompt position the page holds
 * @param positionTo     one past the last
 * @param writerRequest  the request that computed and left the page
 * @param lineageEventId id of the REUSE lineage event that recorded this reuse (0 when the engine has no lineage sink)
 */
public record ReusedPage(String worker, int page, long epoch, int positionFrom, int positionTo, long writerRequest,
                         long lineageEventId) {
    public ReusedPage {
        if (worker == null) {
            throw new IllegalArgumentException("worker is required");
        }
        if (positionFrom < 0 || positionTo <= positionFrom) {
            throw new IllegalArgumentException("bad position range [" + positionFrom + ", " + positionTo + ")");
        }
    }
}
