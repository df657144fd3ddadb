package dev.pagewarden.db.journal;

import dev.pagewarden.core.lineage.LineageEvent;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Compact binary form of a {@link LineageEvent} (the payload of one journal record). Fields that most
 * kinds leave at their "absent" value are behind flag bits, so a WRITE or BIND_READ costs ~45 bytes
 * plus its names. Format version 2 (version 1, still read, has no node: its events get {@link #UNKNOWN_NODE}):
 * <pre>
 * u8 kind code | u8 flags | i64 id | i64 timeMicros | str node | str worker | i32 page | i64 epoch | i64 requestId
 * [str tenant]                     if flags & TENANT
 * [i32 slotFrom | i32 slotTo]      if flags & SLOTS
 * [str peerWorker]                 if flags & PEER_WORKER
 * [i32 peerPage | i64 peerEpoch | i32 generation | i32 checksum]   if flags & TRANSFER
 * ok = flags & OK;  str = u16 length + UTF-8 bytes
 * </pre>
 */
public final class EventCodec {
    private static final int TENANT = 1, SLOTS = 2, PEER_WORKER = 4, TRANSFER = 8, OK = 16;
    /** Upper bound of one encoded event: names are capped so a record can never be absurdly large. */
    public static final int MAX_NAME_BYTES = 1024;
    public static final int MAX_ENCODED = 2 + 8 + 8 + 4 + 8 + 8 + 8 + 20 + 4 * (2 + MAX_NAME_BYTES);
    /** The format {@link #encode} writes. */
    public static final int VERSION = 2;
    /**
     * The node of events from before nodes were recorded (journal format 1, and kv_lineage rows from before
     * migration V5): they came from pools that nobody named, so they are only ever compared among themselves.
     */
    public static final String UNKNOWN_NODE = "unknown";

    private EventCodec() {
    }

    public static void encode(LineageEvent e, ByteBuffer out) {
        int flags = (e.tenant() != null ? TENANT : 0)
                | (e.slotFrom() != -1 || e.slotTo() != -1 ? SLOTS : 0)
                | (e.peerWorker() != null ? PEER_WORKER : 0)
                | (e.peerPage() != -1 || e.peerEpoch() != -1 || e.generation() != 0 || e.checksum() != 0 ? TRANSFER : 0)
                | (e.ok() ? OK : 0);
        out.put((byte) KindCodes.code(e.kind()));
        out.put((byte) flags);
        out.putLong(e.id());
        out.putLong(e.timeMicros());
        putString(out, e.node());
        putString(out, e.worker() == null ? "" : e.worker());
        out.putInt(e.page());
        out.putLong(e.epoch());
        out.putLong(e.requestId());
        if ((flags & TENANT) != 0) {
            putString(out, e.tenant());
        }
        if ((flags & SLOTS) != 0) {
            out.putInt(e.slotFrom());
            out.putInt(e.slotTo());
        }
        if ((flags & PEER_WORKER) != 0) {
            putString(out, e.peerWorker());
        }
        if ((flags & TRANSFER) != 0) {
            out.putInt(e.peerPage());
            out.putLong(e.peerEpoch());
            out.putInt(e.generation());
            out.putInt(e.checksum());
        }
    }

    /** Decodes exactly one event of the current format from {@code in} (positioned at its first byte, limited to its end). */
    public static LineageEvent decode(ByteBuffer in) {
        return decode(in, VERSION);
    }

    /** Decodes exactly one event written in format {@code version} (1 or 2). */
    public static LineageEvent decode(ByteBuffer in, int version) {
        if (version != 1 && version != VERSION) {
            throw new IllegalArgumentException("unknown lineage event format " + version);
        }
        LineageEvent.Kind kind = KindCodes.kind(in.get() & 0xFF);
        int flags = in.get() & 0xFF;
        long id = in.getLong();
        long time = in.getLong();
        String node = version == 1 ? UNKNOWN_NODE : getString(in);
        String worker = getString(in);
        int page = in.getInt();
        long epoch = in.getLong();
        long request = in.getLong();
        String tenant = (flags & TENANT) != 0 ? getString(in) : null;
        int slotFrom = -1, slotTo = -1;
        if ((flags & SLOTS) != 0) {
            slotFrom = in.getInt();
            slotTo = in.getInt();
        }
        String peerWorker = (flags & PEER_WORKER) != 0 ? getString(in) : null;
        int peerPage = -1, generation = 0, checksum = 0;
        long peerEpoch = -1;
        if ((flags & TRANSFER) != 0) {
            peerPage = in.getInt();
            peerEpoch = in.getLong();
            generation = in.getInt();
            checksum = in.getInt();
        }
        if (in.hasRemaining()) {
            throw new IllegalArgumentException(in.remaining() + " trailing bytes after a lineage event");
        }
        return new LineageEvent(id, kind, time, node, worker, page, epoch, request, tenant, slotFrom, slotTo, peerWorker,
                peerPage, peerEpoch, generation, checksum, (flags & OK) != 0);
    }

    private static void putString(ByteBuffer out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("lineage name longer than " + MAX_NAME_BYTES + " bytes: " + s.substring(0, 40) + "...");
        }
        out.putShort((short) b.length);
        out.put(b);
    }

    private static String getString(ByteBuffer in) {
        int n = in.getShort() & 0xFFFF;
        if (n > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("name length " + n + " over the cap");
        }
        byte[] b = new byte[n];
        in.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }
}
