package dev.pagewarden.db.journal;

import java.nio.file.Path;

/**
 * A journal record that is damaged somewhere other than the torn tail of the last segment. Shipping
 * stops here on purpose: skipping it would silently lose audit events, so an operator must look.
 */
public final class JournalCorruptedException extends RuntimeException {
    private final Path segment;
    private final long offset;

    public JournalCorruptedException(Path segment, long offset, String reason) {
        super("lineage journal corrupted: " + segment + " at byte " + offset + ": " + reason
                + " (shipping stopped; events after this point are not in the database)");
        this.segment = segment;
        this.offset = offset;
    }

    public Path segment() {
        return segment;
    }

    public long offset() {
        return offset;
    }
}
