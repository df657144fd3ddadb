package dev.pagewarden.db.lineage;

import dev.pagewarden.core.lineage.LineageEvent;

import java.util.Arrays;
import java.util.List;

/** The shipper's binary COPY stream for tests that send it with statements of their own (an older release's). */
public final class LineageCopyBytes {
    /** The columns, in stream order. */
    public static final String COLUMNS = CopyBinaryEncoder.COLUMNS;

    private LineageCopyBytes() {
    }

    public static byte[] encode(List<LineageEvent> events) {
        CopyBinaryEncoder e = new CopyBinaryEncoder();
        e.encode(events);
        return Arrays.copyOf(e.bytes(), e.length());
    }
}
