package dev.pagewarden.db.lineage;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.journal.KindCodes;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Writes lineage events in PostgreSQL's binary COPY format, columns in {@link #COLUMNS} order. Binary
 * skips the server's text parsing and our escaping; timestamps go as microseconds since 2000-01-01.
 */
final class CopyBinaryEncoder {
    static final String COLUMNS = "event_id, event_time, kind, node, worker, page, epoch, request_id, tenant_id, slot_from, "
            + "slot_to, peer_worker, peer_page, peer_epoch, generation, checksum, ok";
    private static final int FIELDS = 17;
    private static final long PG_EPOCH_MICROS = 946_684_800_000_000L; // 2000-01-01T00:00Z
    private static final byte[] SIGNATURE = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xFF, '\r', '\n', 0};

    private byte[] buf = new byte[1 << 20];
    private int len;

    /** Encodes a whole COPY stream (header, rows, trailer); read it with {@link #bytes()} / {@link #length()}. */
    void encode(List<LineageEvent> events) {
        len = 0;
        put(SIGNATURE);
        putInt(0); // flags
        putInt(0); // header extension length
        for (LineageEvent e : events) {
            ensure(256);
            putShort(FIELDS);
            putInt(8).putLong(e.id());
            putInt(8).putLong(e.timeMicros() - PG_EPOCH_MICROS);
            putInt(2).putShort(KindCodes.code(e.kind()));
            putText(e.node());
            putText(e.worker());
            putInt(4).putInt(e.page());
            putInt(8).putLong(e.epoch());
            putInt(8).putLong(e.requestId());
            putText(e.tenant());
            putInt(4).putInt(e.slotFrom());
            putInt(4).putInt(e.slotTo());
            putText(e.peerWorker());
            putInt(4).putInt(e.peerPage());
            putInt(8).putLong(e.peerEpoch());
            putInt(4).putInt(e.generation());
            putInt(4).putInt(e.checksum());
            putInt(1);
            ensure(1);
            buf[len++] = (byte) (e.ok() ? 1 : 0);
        }
        ensure(2);
        putShort(-1);
    }

    byte[] bytes() {
        return buf;
    }

    int length() {
        return len;
    }

    private void putText(String s) {
        if (s == null) {
            putInt(-1);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        ensure(4 + b.length);
        putInt(b.length);
        put(b);
    }

    private void put(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    private void ensure(int n) {
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
        }
    }

    private CopyBinaryEncoder putShort(int v) {
        ensure(2);
        buf[len++] = (byte) (v >>> 8);
        buf[len++] = (byte) v;
        return this;
    }

    private CopyBinaryEncoder putInt(int v) {
        ensure(4);
        buf[len++] = (byte) (v >>> 24);
        buf[len++] = (byte) (v >>> 16);
        buf[len++] = (byte) (v >>> 8);
        buf[len++] = (byte) v;
        return this;
    }

    private CopyBinaryEncoder putLong(long v) {
        putInt((int) (v >>> 32));
        return putInt((int) v);
    }
}
