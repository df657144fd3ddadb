package dev.pagewarden.db.audit;

import java.util.List;

/** Everything one request read, in read order. */
public record RequestLineage(long requestId, List<PageRead> reads) {
    public RequestLineage {
        reads = List.copyOf(reads);
    }

    /** True if the request read only data it wrote itself. */
    public boolean isolated() {
        return reads.stream().allMatch(r -> r.writtenOnlyBy(requestId));
    }
}
