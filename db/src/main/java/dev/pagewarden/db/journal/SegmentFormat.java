package dev.pagewarden.db.journal;

import dev.pagewarden.core.lineage.LineageEvent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * On-disk layout of a journal segment: an 8-byte header (magic, version) then records of
 * {@code i32 payload length | i32 CRC32C(payload) | payload}, big-endian. The CRC covers the payload;
 * a damaged length shows up as an impossible length or as a CRC mismatch of what it frames. The header's
 * version is the {@link EventCodec} format of every record in the segment: new segments are written in
 * the current one, segments of an older version (left by the previous release) are still read.
 */
public final class SegmentFormat {
    static final int MAGIC = 0x50574A4C; // "PWJL"
    static final int VERSION = EventCodec.VERSION;
    /** Oldest version still read. */
    static final int OLDEST_VERSION = 1;
    public static final int HEADER_BYTES = 8;
    public static final int RECORD_OVERHEAD = 8;

    private SegmentFormat() {
    }

    static ByteBuffer header() {
        return ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).putInt(VERSION).flip();
    }

    /** Where reading a segment stopped and why. */
    public record Scan(long end, long records, String problem, boolean tornTail) {
        boolean clean() {
            return problem == null;
        }
    }

    /**
     * Reads records from {@code from} (a record boundary) up to {@code to}, adding at most {@code maxEvents}
     * events to {@code out}; returns the offset after the last event read. Anything that does not verify
     * in [from, to) is corruption: this range was fsynced whole.
     */
    public static long read(Path path, long from, long to, int maxEvents, List<LineageEvent> out) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            int version = checkHeader(ch, path);
            from = Math.max(from, HEADER_BYTES);
            ByteBuffer head = ByteBuffer.allocate(RECORD_OVERHEAD);
            ByteBuffer payload = ByteBuffer.allocate(EventCodec.MAX_ENCODED);
            CRC32C crc = new CRC32C();
            long pos = from;
            int n = 0;
            while (pos < to && n < maxEvents) {
                if (to - pos < RECORD_OVERHEAD) {
                    throw new JournalCorruptedException(path, pos, "record header cut short (" + (to - pos) + " bytes)");
                }
                head.clear();
                readFully(ch, head, pos);
                int len = head.getInt(0);
                int expected = head.getInt(4);
                if (len <= 0 || len > EventCodec.MAX_ENCODED) {
                    throw new JournalCorruptedException(path, pos, "impossible record length " + len);
                }
                if (pos + RECORD_OVERHEAD + len > to) {
                    throw new JournalCorruptedException(path, pos, "record of " + len + " bytes runs past the durable end " + to);
                }
                payload.clear().limit(len);
                readFully(ch, payload, pos + RECORD_OVERHEAD);
                crc.reset();
                crc.update(payload.duplicate());
                if ((int) crc.getValue() != expected) {
                    throw new JournalCorruptedException(path, pos, "CRC32C mismatch (stored " + Integer.toHexString(expected)
                            + ", computed " + Integer.toHexString((int) crc.getValue()) + ")");
                }
                try {
                    out.add(EventCodec.decode(payload, version));
                } catch (RuntimeException e) {
                    throw new JournalCorruptedException(path, pos, "checksum ok but undecodable: " + e.getMessage());
                }
                pos += RECORD_OVERHEAD + len;
                n++;
            }
            return pos;
        }
    }

    /**
     * Scans a whole segment for recovery. A damaged record is a <em>torn tail</em> (a crash mid-append)
     * only if nothing meaningful follows it: it runs past end of file, or it is the last record, or only
     * zeros follow (a file extended but never written). Anything else is corruption.
     */
    static Scan scan(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < HEADER_BYTES) {
                return new Scan(0, 0, "segment header cut short (" + size + " bytes)", true);
            }
            int version = checkHeader(ch, path);
            ByteBuffer head = ByteBuffer.allocate(RECORD_OVERHEAD);
            ByteBuffer payload = ByteBuffer.allocate(EventCodec.MAX_ENCODED);
            CRC32C crc = new CRC32C();
            long pos = HEADER_BYTES;
            long records = 0;
            while (pos < size) {
                if (size - pos < RECORD_OVERHEAD) {
                    return new Scan(pos, records, "record header cut short at end of file", true);
                }
                head.clear();
                readFully(ch, head, pos);
                int len = head.getInt(0);
                int expected = head.getInt(4);
                if (len <= 0 || len > EventCodec.MAX_ENCODED) {
                    boolean zeros = zerosFrom(ch, pos, size);
                    return new Scan(pos, records, "impossible record length " + len, zeros);
                }
                long end = pos + RECORD_OVERHEAD + len;
                if (end > size) {
                    return new Scan(pos, records, "record of " + len + " bytes runs past end of file", true);
                }
                payload.clear().limit(len);
                readFully(ch, payload, pos + RECORD_OVERHEAD);
                crc.reset();
                crc.update(payload.duplicate());
                if ((int) crc.getValue() != expected) {
                    boolean torn = end == size || zerosFrom(ch, end, size);
                    return new Scan(pos, records, "CRC32C mismatch", torn);
                }
                try {
                    EventCodec.decode(payload, version);
                } catch (RuntimeException e) {
                    return new Scan(pos, records, "checksum ok but undecodable: " + e.getMessage(), false);
                }
                pos = end;
                records++;
            }
            return new Scan(pos, records, null, false);
        }
    }

    /** Returns the segment's format version. */
    private static int checkHeader(FileChannel ch, Path path) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
        readFully(ch, h, 0);
        int version = h.getInt(4);
        if (h.getInt(0) != MAGIC || version < OLDEST_VERSION || version > VERSION) {
            throw new JournalCorruptedException(path, 0, "not a version " + OLDEST_VERSION + " to " + VERSION
                    + " lineage journal segment (bad header: version " + version + ")");
        }
        return version;
    }

    private static boolean zerosFrom(FileChannel ch, long from, long size) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64 * 1024);
        long pos = from;
        while (pos < size) {
            b.clear();
            int n = ch.read(b, pos);
            if (n <= 0) {
                break;
            }
            for (int i = 0; i < n; i++) {
                if (b.get(i) != 0) {
                    return false;
                }
            }
            pos += n;
        }
        return true;
    }

    static void readFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file");
            }
            pos += n;
        }
        b.flip();
    }
}
