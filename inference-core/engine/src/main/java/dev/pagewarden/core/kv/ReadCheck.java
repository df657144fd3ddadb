package dev.pagewarden.core.kv;

/**
 * The verdict on one sequence's reads in one step.
 *
 * @param violation the check that refused the read, or null when the read may go ahead
 * @param page      the offending page (-1 when none)
 * @param epoch     the epoch the page table expected for it
 * @param details   expected vs found
 */
public record ReadCheck(Violation violation, int page, long epoch, String details) {

    public static final ReadCheck CLEAN = new ReadCheck(null, -1, 0, "");

    /** Why a read was refused; each has a detector of the same name. */
    public enum Violation {
        /** The page is not the reader's in the epoch of its page table. */
        OWNER_TAG_MISMATCH,
        /** The page table points at a free page. */
        FREE_PAGE_READ,
        /** The reader's page holds slots its owner never wrote in this epoch (stale bytes). */
        UNWRITTEN_SLOT_READ;

        /** The detector's name as events and metrics spell it. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    /** The error a refused request ends with. */
    public String refusal(long requestId) {
        return "request " + requestId + " stopped: " + violation.label() + ": " + details;
    }

    public boolean allowed() {
        return violation == null;
    }
}
