package dev.pagewarden.db.audit;

import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptVerifier;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.receipt.TrustedKeys;
import dev.pagewarden.db.journal.EventCodec;
import dev.pagewarden.db.journal.KindCodes;

import javax.sql.DataSource;
import java.security.PublicKey;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Server-side check of an isolation receipt against the lineage in PostgreSQL.
 *
 * <ol>
 * <li>Binding: verifying a stored row, the receipt's signed body must name that row's request id, tenant and
 * model; otherwise MISMATCH (a receipt copied into another row proves nothing about that row).</li>
 * <li>Signature: digest and Ed25519 signature by a key that chains to the pinned trust ({@link KeyTrust}), issued
 * before that key was replaced; invalid -> MISMATCH.</li>
 * <li>Completeness (PENDING): the receipt names, per page epoch read, the id of the BIND_READ event
 * that recorded the first read. The engine emits that event, later the READ_FINAL with the final range,
 * and then the reader's RELEASE of the page epoch, before it finishes the request and signs the receipt;
 * the journal ships events in the order they were emitted, and every write into a slot happened (and was
 * emitted) before the read of it. So once every named BIND_READ and the RELEASE of every read page epoch
 * are in the database, every event the verdict depends on is too. Until then: PENDING (never OK). A
 * receipt with no reads has nothing to wait for.</li>
 * <li>Match: each named event is a BIND_READ of this request and tenant on the receipt's (node, worker,
 * page, epoch) - the node is the receipt's {@code node_id} (version 2; rows from before nodes were
 * recorded, node {@code unknown}, and version 1 receipts, which name none, are matched without it) -
 * in the receipt's order; the read's slots are the final range of the request's READ_FINAL of
 * that page epoch (version 2) or the BIND_READ's own range (version 1); and the database holds no other
 * BIND_READ of the request from the same engine start (event id prefix). Otherwise MISMATCH.</li>
 * <li>Reused prefix pages (version 4): each cached page the receipt lists names a REUSE event of this request
 * and tenant on that (node, worker, page, epoch) with the page's slots, and the page epoch's CACHE event names the
 * writer the receipt gives (else MISMATCH; an event not in the database yet: PENDING); the database holds no other
 * REUSE of the request from the same engine start (else MISMATCH). The page must have been cached in the
 * reader's own scope - the CACHE event's tenant and scope digest equal the reader's - else VIOLATION naming the
 * writer: a reuse inside the scope is the request's own tenant's data, one across scopes is not.</li>
 * <li>Isolation: every slot read was last written (WRITE / TRANSFER_IN, any epoch) by this request -
 * as of the end of the reading for version 2 (so the request's own decode writes count), as of the
 * first read for version 1 - and no other request wrote into a read page epoch between the first read
 * and the release. Otherwise VIOLATION, naming each foreign (or missing: never written, scrubbed) writer.</li>
 * </ol>
 *
 * <p>A receipt whose reads are missing because the lineage partition of its request's day was dropped after
 * the retention is answered from the blast radius frozen with a published disclosure whose window holds the
 * request, if there is one (see {@link #fromFrozen}), instead of PENDING for ever.
 */
public final class ReceiptAudit {
    public enum Status { OK, VIOLATION, MISMATCH, PENDING }

    /**
     * Slots [slotFrom, slotTo) of a read page epoch whose data was not the reader's: {@code kind} WRITE or
     * TRANSFER_IN (writer request / tenant / epoch named), NONE (never written) or SCRUB (zeroed);
     * {@code afterRead}: written into the page epoch after the read, while the reader still held it.
     */
    public record ForeignWrite(String node, String worker, int page, long epoch, int slotFrom, int slotTo, String kind,
                               long writerRequest, String writerTenant, long writerEpoch, boolean afterRead) {
    }

    public record Verdict(Status status, String detail, List<ForeignWrite> foreignWrites) {
        public Verdict {
            foreignWrites = List.copyOf(foreignWrites);
        }

        static Verdict of(Status s, String detail) {
            return new Verdict(s, detail, List.of());
        }

        /** The other requests whose data the receipt's request read (0 stands for "nobody's": never written / scrubbed). */
        public Set<Long> foreignWriters() {
            Set<Long> out = new java.util.TreeSet<>();
            foreignWrites.forEach(f -> out.add(f.writerRequest()));
            return out;
        }
    }

    /** Finds the public key a receipt names by its key id, vouched for by the caller; null when none has it. */
    @FunctionalInterface
    public interface KeyLookup {
        PublicKey find(String keyId) throws SQLException;
    }

    /** The row a stored receipt was found in: its signed body must name this request id, tenant and model. */
    public record Row(long requestId, String tenant, String model) {
    }

    private interface Refusal {
        String refuse(Receipt receipt) throws SQLException;
    }

    private final DataSource dataSource;
    private final Refusal signature;
    private final Function<String, Set<String>> modelNames;

    /** {@code publicKeys}: keys the caller vouches for, by key id (asked on every verification, so rotation shows). */
    public ReceiptAudit(DataSource dataSource, Supplier<Map<String, PublicKey>> publicKeys) {
        this(dataSource, (KeyLookup) id -> publicKeys.get().get(id));
    }

    /** {@code keys}: where a receipt's key is looked up, every key it finds vouched for by the caller. */
    public ReceiptAudit(DataSource dataSource, KeyLookup keys) {
        this(dataSource, (Refusal) receipt -> {
            PublicKey key = keys.find(receipt.keyId());
            return key == null ? "unknown receipt key id '" + receipt.keyId() + "': no replica registered it (receipt_keys)"
                    : TrustedKeys.pinned(Map.of(receipt.keyId(), key)).refuse(receipt);
        });
    }

    private ReceiptAudit(DataSource dataSource, Refusal signature) {
        this(dataSource, signature, model -> Set.of());
    }

    private ReceiptAudit(DataSource dataSource, Refusal signature, Function<String, Set<String>> modelNames) {
        this.dataSource = dataSource;
        this.signature = signature;
        this.modelNames = modelNames;
    }

    /**
     * Verifies against the keys that chain to {@code trust}'s pinned roots (what the platform runs with).
     * {@code modelNames}: besides a row's own model name, the names a receipt may give that model (the engine names
     * the model file).
     */
    public static ReceiptAudit trusting(DataSource dataSource, KeyTrust trust, Function<String, Set<String>> modelNames) {
        return new ReceiptAudit(dataSource, receipt -> trust.keys().refuse(receipt), modelNames);
    }

    /** Verifies the receipt stored in {@code row}: bound to the row first, then as {@link #verify(Receipt)}. */
    public Verdict verify(Receipt receipt, Row row) throws SQLException {
        String foreign = refuse(receipt, row);
        if (foreign != null) {
            return Verdict.of(Status.MISMATCH, foreign);
        }
        return verify(receipt);
    }

    /** Why {@code receipt} does not belong to {@code row}, or null when its signed body names the row's request. */
    private String refuse(Receipt receipt, Row row) {
        var b = receipt.body();
        if (b.requestId() != row.requestId()) {
            return "the receipt is of request " + b.requestId() + ", not of this row's request " + row.requestId();
        }
        if (!b.tenant().equals(row.tenant())) {
            return "the receipt is of another tenant than this row's";
        }
        if (!b.modelId().equals(row.model()) && !modelNames.apply(row.model()).contains(b.modelId())) {
            return "the receipt is of model '" + b.modelId() + "', not of this row's model '" + row.model() + "'";
        }
        return null;
    }

    /** Verifies a receipt on its own (no stored row to bind it to): signature, then against the lineage. */
    public Verdict verify(Receipt receipt) throws SQLException {
        String refused = signature.refuse(receipt);
        if (refused != null) {
            return Verdict.of(Status.MISMATCH, refused);
        }
        Verdict reuses = reusedPages(receipt);
        if (reuses != null) {
            return reuses;
        }
        List<PageEpochRead> reads = receipt.body().reads();
        if (reads.isEmpty()) {
            return Verdict.of(Status.OK, "the request read no cached KV");
        }
        Long[] ids = new Long[reads.size()];
        Set<Long> distinct = new HashSet<>();
        for (int i = 0; i < ids.length; i++) {
            ids[i] = reads.get(i).lineageEventId();
            if (ids[i] == 0 || !distinct.add(ids[i])) {
                return Verdict.of(Status.MISMATCH, "receipt names no or duplicate lineage event for read " + reads.get(i));
            }
        }
        try (Connection c = dataSource.getConnection()) {
            Array idArray = c.createArrayOf("bigint", ids);
            Verdict v = checkBinds(c, receipt, binds(c, idArray));
            if (v == null) {
                v = unclaimedRead(c, receipt.body().requestId(), ids[0], distinct);
            }
            return v != null ? v : isolation(c, receipt, idArray);
        }
    }

    /**
     * The reused prefix pages of a version 4 receipt (see the class comment): MISMATCH, PENDING or VIOLATION when
     * they do not check out, null when they do (or the receipt lists none).
     */
    private Verdict reusedPages(Receipt receipt) throws SQLException {
        List<ReusedPage> reused = receipt.body().reused();
        if (reused.isEmpty()) {
            return null;
        }
        Long[] ids = new Long[reused.size()];
        Set<Long> distinct = new HashSet<>();
        for (int i = 0; i < ids.length; i++) {
            ids[i] = reused.get(i).lineageEventId();
            if (ids[i] == 0 || !distinct.add(ids[i])) {
                return Verdict.of(Status.MISMATCH, "receipt names no or duplicate lineage event for reused page " + reused.get(i));
            }
        }
        long request = receipt.body().requestId();
        String tenant = receipt.body().tenant();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LineageSql.RECEIPT_REUSES)) {
            ps.setArray(1, c.createArrayOf("bigint", ids));
            Map<Long, Object[]> rows = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Object[] row = new Object[14];
                    for (int k = 0; k < row.length; k++) {
                        row[k] = rs.getObject(k + 1);
                    }
                    rows.put(rs.getLong(1), row);
                }
            }
            List<ForeignWrite> foreign = new ArrayList<>();
            int missing = 0;
            for (int i = 0; i < reused.size(); i++) {
                ReusedPage r = reused.get(i);
                Object[] u = rows.get(r.lineageEventId());
                if (u == null) {
                    missing++;
                    continue;
                }
                int slots = ((Number) u[9]).intValue() - ((Number) u[8]).intValue();
                if (((Number) u[1]).intValue() != KindCodes.REUSE || ((Number) u[6]).longValue() != request
                        || !Objects.equals(u[7], tenant) || !nodeMatches((String) u[2], receipt) || !r.worker().equals(u[3])
                        || ((Number) u[4]).intValue() != r.page() || ((Number) u[5]).longValue() != r.epoch()
                        || slots != r.positionTo() - r.positionFrom()) {
                    return Verdict.of(Status.MISMATCH, "reused page " + i + " " + r + " does not match lineage event "
                            + r.lineageEventId());
                }
                if (u[11] == null) {
                    foreign.add(new ForeignWrite((String) u[2], r.worker(), r.page(), r.epoch(), 0, slots, "NONE", 0, null,
                            -1, false));
                    continue;
                }
                long writer = ((Number) u[11]).longValue();
                if (writer != r.writerRequest()) {
                    return Verdict.of(Status.MISMATCH, "reused page " + i + " " + r + " names writer " + r.writerRequest()
                            + " but the page epoch was cached by request " + writer);
                }
                if (!Objects.equals(u[12], tenant) || ((Number) u[13]).longValue() != ((Number) u[10]).longValue()) {
                    foreign.add(new ForeignWrite((String) u[2], r.worker(), r.page(), r.epoch(), 0, slots, "CACHE", writer,
                            (String) u[12], r.epoch(), false));
                }
            }
            if (missing > 0) {
                return Verdict.of(Status.PENDING, missing + " of " + reused.size() + " reused prefix pages not in the database yet");
            }
            try (PreparedStatement all = c.prepareStatement(LineageSql.RECEIPT_ALL_REUSES)) {
                all.setLong(1, request);
                all.setLong(2, ids[0] >> 40);
                try (ResultSet rs = all.executeQuery()) {
                    while (rs.next()) {
                        if (!distinct.contains(rs.getLong(1))) {
                            return Verdict.of(Status.MISMATCH, "lineage has a reused prefix page the receipt leaves out: event "
                                    + rs.getLong(1));
                        }
                    }
                }
            }
            if (!foreign.isEmpty()) {
                return new Verdict(Status.VIOLATION, "request " + request + " reused prefix pages cached outside its scope by "
                        + new Verdict(Status.VIOLATION, "", foreign).foreignWriters(), foreign);
            }
        }
        return null;
    }

    /** A named lineage event as the receipt checks read it: its BIND_READ fields, its release and final range. */
    private record Bind(long kind, String node, String worker, int page, long epoch, long request, String tenant, int from,
                        int to, boolean released, Integer finalFrom, Integer finalTo) {
    }

    /** The lineage events the receipt names, by id (those not in the database yet are absent). */
    private static Map<Long, Bind> binds(Connection c, Array idArray) throws SQLException {
        Map<Long, Bind> binds = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(LineageSql.RECEIPT_BINDS)) {
            ps.setArray(1, idArray);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    binds.put(rs.getLong(1), new Bind(rs.getInt(2), rs.getString(13), rs.getString(3), rs.getInt(4), rs.getLong(5),
                            rs.getLong(6), rs.getString(7), rs.getInt(8), rs.getInt(9), rs.getObject(10) != null,
                            (Integer) rs.getObject(11), (Integer) rs.getObject(12)));
                }
            }
        }
        return binds;
    }

    /**
     * Completeness and match of the named events (see the class comment): MISMATCH for a read its event
     * does not match, the frozen answer or PENDING while events or releases are missing; null when every
     * named event is there, released and matching.
     */
    private static Verdict checkBinds(Connection c, Receipt receipt, Map<Long, Bind> binds) throws SQLException {
        List<PageEpochRead> reads = receipt.body().reads();
        int missing = 0, unreleased = 0;
        for (int i = 0; i < reads.size(); i++) {
            PageEpochRead r = reads.get(i);
            Bind b = binds.get(r.lineageEventId());
            if (b == null) {
                missing++;
                continue;
            }
            Verdict mismatch = mismatch(i, r, b, receipt);
            if (mismatch != null) {
                return mismatch;
            }
            if (!b.released()) {
                unreleased++;
            }
        }
        if (missing > 0) {
            Verdict frozen = fromFrozen(c, receipt);
            if (frozen != null) {
                return frozen;
            }
        }
        if (missing > 0 || unreleased > 0) {
            return Verdict.of(Status.PENDING, missing + " of " + reads.size() + " named reads and " + unreleased
                    + " releases not in the database yet");
        }
        return null;
    }

    /** MISMATCH when read {@code i} is not its event's BIND_READ or claims other slots than the lineage has; else null. */
    private static Verdict mismatch(int i, PageEpochRead r, Bind b, Receipt receipt) {
        if (b.kind() != KindCodes.BIND_READ || b.request() != receipt.body().requestId()
                || !Objects.equals(b.tenant(), receipt.body().tenant()) || !nodeMatches(b.node(), receipt)
                || !b.worker().equals(r.worker())
                || b.page() != r.page() || b.epoch() != r.epoch() || b.from() != 0) {
            return Verdict.of(Status.MISMATCH, "read " + i + " " + r + " does not match lineage event " + b);
        }
        boolean finals = receipt.body().version() >= 2;
        if (finals && !b.released()) {
            return null; // the final range arrives just before the RELEASE
        }
        boolean rangeMatches = finals
                ? b.finalTo() != null && b.finalFrom() == 0 && b.finalTo() == r.slots() && b.to() <= r.slots()
                : b.to() == r.slots();
        if (!rangeMatches) {
            return Verdict.of(Status.MISMATCH, "read " + i + " " + r + " claims slots [0, " + r.slots()
                    + ") but the lineage has " + (finals ? "final range " + (b.finalTo() == null ? "none"
                    : "[" + b.finalFrom() + ", " + b.finalTo() + ")") : "first read [0, " + b.to() + ")"));
        }
        return null;
    }

    /** MISMATCH when the request has a BIND_READ from the same engine start that the receipt does not name; else null. */
    private static Verdict unclaimedRead(Connection c, long request, long firstId, Set<Long> named) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LineageSql.RECEIPT_ALL_BINDS)) {
            ps.setLong(1, request);
            ps.setLong(2, firstId >> 40); // arithmetic, as PostgreSQL shifts bigint (ids may be negative)
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!named.contains(rs.getLong(1))) {
                        return Verdict.of(Status.MISMATCH, "lineage has a read the receipt leaves out: event "
                                + rs.getLong(1));
                    }
                }
            }
        }
        return null;
    }

    /** The last writer of every slot read, in the lineage's read order: that order, the foreign runs, the slots read. */
    private record SlotWriters(List<Long> order, List<ForeignWrite> foreign, int slots) {
    }

    /**
     * Isolation: MISMATCH when the lineage reads in another order than the receipt; VIOLATION naming every
     * foreign (or missing) writer of a read slot and every write into a read page epoch while it was held;
     * otherwise OK.
     */
    private static Verdict isolation(Connection c, Receipt receipt, Array idArray) throws SQLException {
        long request = receipt.body().requestId();
        List<PageEpochRead> reads = receipt.body().reads();
        SlotWriters w = slotWriters(c, request, receipt.body().version() >= 2, idArray);
        List<Long> claimed = reads.stream().map(PageEpochRead::lineageEventId).toList();
        if (!w.order().equals(claimed)) {
            return Verdict.of(Status.MISMATCH, "lineage read order " + w.order() + " differs from the receipt's");
        }
        List<ForeignWrite> foreign = new ArrayList<>(w.foreign());
        foreign.addAll(lateWrites(c, idArray));
        if (!foreign.isEmpty()) {
            return new Verdict(Status.VIOLATION, "request " + request + " read data written by "
                    + new Verdict(Status.VIOLATION, "", foreign).foreignWriters(), foreign);
        }
        return Verdict.of(Status.OK, reads.size() + " page epochs read, " + w.slots()
                + " slots, every slot written by request " + request);
    }

    /** Each read slot's last writer; runs of adjacent slots with the same foreign writer become one {@link ForeignWrite}. */
    private static SlotWriters slotWriters(Connection c, long request, boolean finals, Array idArray) throws SQLException {
        List<ForeignWrite> foreign = new ArrayList<>();
        List<Long> order = new ArrayList<>();
        int slots = 0;
        try (PreparedStatement ps = c.prepareStatement(LineageSql.RECEIPT_READS)) {
            ps.setBoolean(1, finals);
            ps.setArray(2, idArray);
            try (ResultSet rs = ps.executeQuery()) {
                long lastEvent = 0;
                while (rs.next()) {
                    long event = rs.getLong(1);
                    if (order.isEmpty() || event != lastEvent) {
                        order.add(event);
                        lastEvent = event;
                    }
                    if (rs.getObject(8) == null) {
                        continue; // a read of no slot (version 1: a page first read before it held any)
                    }
                    slots++;
                    Object kindCode = rs.getObject(9);
                    String kind = kindCode == null ? "NONE" : KindCodes.kind(((Number) kindCode).intValue()).name();
                    long writer = kindCode == null ? 0 : rs.getLong(10);
                    if (writer == request && !kind.equals("SCRUB")) {
                        continue;
                    }
                    int slot = rs.getInt(8);
                    long writerEpoch = kindCode == null ? -1 : rs.getLong(12);
                    extend(foreign, new ForeignWrite(rs.getString(14), rs.getString(2), rs.getInt(3), rs.getLong(4), slot,
                            slot + 1, kind, writer, rs.getString(11), writerEpoch, false));
                }
            }
        }
        return new SlotWriters(order, foreign, slots);
    }

    /** Adds one slot's foreign write, joined to the last run when it continues it (same page epoch, writer and kind). */
    private static void extend(List<ForeignWrite> foreign, ForeignWrite w) {
        ForeignWrite last = foreign.isEmpty() ? null : foreign.getLast();
        if (last != null && !last.afterRead() && last.node().equals(w.node()) && last.worker().equals(w.worker())
                && last.page() == w.page() && last.epoch() == w.epoch() && last.slotTo() == w.slotFrom()
                && last.kind().equals(w.kind()) && last.writerRequest() == w.writerRequest()
                && last.writerEpoch() == w.writerEpoch()) {
            foreign.set(foreign.size() - 1, new ForeignWrite(last.node(), last.worker(), last.page(), last.epoch(),
                    last.slotFrom(), w.slotTo(), w.kind(), w.writerRequest(), w.writerTenant(), w.writerEpoch(), false));
        } else {
            foreign.add(w);
        }
    }

    /** Writes into a read page epoch after the read, while the reader still held it. */
    private static List<ForeignWrite> lateWrites(Connection c, Array idArray) throws SQLException {
        List<ForeignWrite> late = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(LineageSql.RECEIPT_LATE_WRITES)) {
            ps.setArray(1, idArray);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    late.add(new ForeignWrite(rs.getString(11), rs.getString(2), rs.getInt(3), rs.getLong(4), rs.getInt(5),
                            rs.getInt(6), KindCodes.kind(rs.getInt(7)).name(), rs.getLong(8), rs.getString(9),
                            rs.getLong(10), true));
                }
            }
        }
        return late;
    }

    /**
     * The answer for a receipt whose lineage was dropped, from the blast radius frozen with the latest published
     * disclosure whose window holds the request ({@code requests.received_at}): VIOLATION naming the writers the
     * frozen set lists for it as a reader (slot detail is gone with the lineage), otherwise OK - the exposure
     * finder found no read of other tenants' data by it in that window. Null when the request's lineage
     * partition still exists (its events are late, not gone) or no frozen set covers it.
     */
    private static Verdict fromFrozen(Connection c, Receipt receipt) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LineageSql.RECEIPT_FROZEN)) {
            ps.setQueryTimeout(LineageSql.FROZEN_TIMEOUT_S);
            ps.setLong(1, receipt.body().requestId());
            ps.setString(2, receipt.body().tenant());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                String source = "the lineage of " + rs.getString(2) + " was dropped after the retention; answered from the blast "
                        + "radius frozen with disclosure " + rs.getLong(1) + " (incident " + rs.getLong(3) + ", SHA-256 "
                        + java.util.HexFormat.of().formatHex(rs.getBytes(4)) + ")";
                Array writers = rs.getArray(5);
                if (writers == null) {
                    return Verdict.of(Status.OK, source + ", which lists no read of other tenants' data by request "
                            + receipt.body().requestId());
                }
                Long[] ids = (Long[]) writers.getArray();
                String[] tenants = (String[]) rs.getArray(6).getArray();
                List<ForeignWrite> foreign = new ArrayList<>();
                for (Long id : ids) {
                    // the frozen set keeps writers, not which of them wrote where: page and slots unknown (-1)
                    foreign.add(new ForeignWrite(rs.getString(7), rs.getString(8), -1, -1, -1, -1, "FROZEN", id,
                            tenants.length == 1 ? tenants[0] : null, -1, false));
                }
                return new Verdict(Status.VIOLATION, source + ", which lists request " + receipt.body().requestId()
                        + " as having read data written by " + java.util.Arrays.toString(ids), foreign);
            }
        }
    }

    /** Whether a lineage row's node is the node a receipt names (see the class comment for rows and receipts without one). */
    private static boolean nodeMatches(String rowNode, Receipt receipt) {
        String named = receipt.body().nodeId();
        return named == null || rowNode.equals(named) || rowNode.equals(EventCodec.UNKNOWN_NODE);
    }
}
