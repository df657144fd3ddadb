package dev.pagewarden.db.audit;

import javax.sql.DataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import dev.pagewarden.db.journal.KindCodes;

/** The audit questions as Java calls; SQL lives in {@link LineageSql}. Read-only, plain JDBC. */
public final class LineageQueries {
    private final DataSource dataSource;

    public LineageQueries(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Tenant-scoped audit: the lineage of {@code requestId} only if that request belongs to
     * {@code tenant}; another tenant's request is indistinguishable from one that does not exist
     * (the API answers 404 for both, so ids cannot be probed).
     */
    public java.util.Optional<RequestLineage> requestLineageOf(String tenant, long requestId) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LineageSql.REQUEST_TENANT)) {
            ps.setLong(1, requestId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || !tenant.equals(rs.getString(1))) {
                    return java.util.Optional.empty();
                }
            }
        }
        return java.util.Optional.of(requestLineage(requestId));
    }

    /**
     * Every page epoch {@code requestId} read (in read order) with the slots it read there by the end of
     * the request, who wrote each of them, and the transfers into those pages.
     */
    public RequestLineage requestLineage(long requestId) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Map<String, List<TransferHop>> hops = new HashMap<>();
            try (PreparedStatement ps = c.prepareStatement(LineageSql.REQUEST_TRANSFERS)) {
                ps.setLong(1, requestId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        TransferHop h = new TransferHop(rs.getString(14), rs.getString(4), rs.getInt(5), rs.getLong(6), rs.getString(1),
                                rs.getInt(2), rs.getLong(3), rs.getInt(7), rs.getInt(8), rs.getInt(9), rs.getInt(10),
                                (Integer) rs.getObject(11), rs.getLong(13), rs.getTimestamp(12).toInstant());
                        hops.computeIfAbsent(key(h.node(), h.toWorker(), h.toPage(), h.toEpoch()), k -> new ArrayList<>()).add(h);
                    }
                }
            }
            List<PageRead> reads = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(LineageSql.REQUEST_READS)) {
                ps.setLong(1, requestId);
                try (ResultSet rs = ps.executeQuery()) {
                    ReadBuilder current = null;
                    while (rs.next()) {
                        long event = rs.getLong(1);
                        if (current == null || current.event != event) {
                            if (current != null) {
                                reads.add(current.build(hops));
                            }
                            current = new ReadBuilder(event, rs.getString(14), rs.getString(2), rs.getInt(3), rs.getLong(4), rs.getInt(5),
                                    rs.getInt(6), rs.getTimestamp(7).toInstant());
                        }
                        if (rs.getObject(8) == null) {
                            continue; // a read of no slot: listed, with no writers
                        }
                        int slot = rs.getInt(8);
                        Object kind = rs.getObject(9);
                        Timestamp writtenAt = rs.getTimestamp(13);
                        current.slot(slot, kind == null ? "NONE" : KindCodes.kind(((Number) kind).intValue()).name(),
                                rs.getLong(10), rs.getString(11), kind == null ? -1 : rs.getLong(12),
                                writtenAt == null ? null : writtenAt.toInstant());
                    }
                    if (current != null) {
                        reads.add(current.build(hops));
                    }
                }
            }
            return new RequestLineage(requestId, reads);
        }
    }

    /** Reads in [from, to) of data last written by another tenant's request. */
    public List<Exposure> exposures(Instant from, Instant to) throws SQLException {
        return exposures(from, to, null);
    }

    /** As {@link #exposures(Instant, Instant)}, limited to reads on {@code worker} of any node (null = all workers). */
    public List<Exposure> exposures(Instant from, Instant to, String worker) throws SQLException {
        return exposures(from, to, null, worker);
    }

    /** As {@link #exposures(Instant, Instant)}, limited to reads on {@code node} (null = all) and {@code worker} (null = all). */
    public List<Exposure> exposures(Instant from, Instant to, String node, String worker) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LineageSql.EXPOSURES)) {
            for (int part = 0; part < 3; part++) {
                ps.setTimestamp(6 * part + 1, Timestamp.from(from));
                ps.setTimestamp(6 * part + 2, Timestamp.from(to));
                ps.setString(6 * part + 3, node);
                ps.setString(6 * part + 4, node);
                ps.setString(6 * part + 5, worker);
                ps.setString(6 * part + 6, worker);
            }
            List<Exposure> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Exposure(rs.getString(3), rs.getLong(4), rs.getString(1), rs.getLong(2), rs.getString(13), rs.getString(5),
                            rs.getInt(6), rs.getLong(7), rs.getLong(8), rs.getInt(9), rs.getTimestamp(10).toInstant(),
                            rs.getTimestamp(11).toInstant()));
                }
            }
            return out;
        }
    }

    /**
     * Blast radius of an incident window: affected responses, how many were delivered, tenants on both sides.
     *
     * @param model  only readers of this model (needs their {@code requests} row); null = all
     * @param worker only reads on this pool, of any node; null = all
     */
    public BlastRadius blastRadius(Instant from, Instant to, String model, String worker) throws SQLException {
        return blastRadius(from, to, model, null, worker);
    }

    /** As {@link #blastRadius(Instant, Instant, String, String)}, only reads on {@code node}'s pools (null = every node). */
    public BlastRadius blastRadius(Instant from, Instant to, String model, String node, String worker) throws SQLException {
        List<Exposure> exposures = exposures(from, to, node, worker);
        Map<Long, String[]> statusModel = new HashMap<>();
        if (!exposures.isEmpty()) {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LineageSql.REQUEST_STATUS)) {
                Array ids = c.createArrayOf("bigint", exposures.stream().map(Exposure::readerRequest).distinct().toArray());
                ps.setArray(1, ids);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        statusModel.put(rs.getLong(1), new String[] {rs.getString(2), rs.getString(3)});
                    }
                }
            }
        }
        Map<Long, List<Exposure>> byReader = new LinkedHashMap<>();
        for (Exposure e : exposures) {
            String[] sm = statusModel.get(e.readerRequest());
            if (model != null && (sm == null || !model.equals(sm[1]))) {
                continue;
            }
            byReader.computeIfAbsent(e.readerRequest(), k -> new ArrayList<>()).add(e);
        }
        List<BlastRadius.AffectedResponse> responses = new ArrayList<>();
        Set<String> readers = new TreeSet<>(), exposed = new TreeSet<>();
        int delivered = 0;
        Instant first = null, last = null;
        for (var entry : byReader.entrySet()) {
            List<Exposure> es = entry.getValue();
            Set<String> tenants = new TreeSet<>();
            Set<Long> writers = new TreeSet<>();
            Set<String> pages = new LinkedHashSet<>();
            int slots = 0;
            for (Exposure e : es) {
                tenants.add(e.exposedTenant());
                writers.add(e.exposingRequest());
                pages.add(key(e.node(), e.worker(), e.page(), e.readEpoch()));
                slots += e.slots();
                first = first == null || e.readAt().isBefore(first) ? e.readAt() : first;
                last = last == null || e.readAt().isAfter(last) ? e.readAt() : last;
            }
            String[] sm = statusModel.get(entry.getKey());
            var r = new BlastRadius.AffectedResponse(entry.getKey(), es.getFirst().readerTenant(), sm == null ? null : sm[0],
                    tenants, writers, pages.size(), slots);
            responses.add(r);
            delivered += r.delivered() ? 1 : 0;
            readers.add(Objects.requireNonNullElse(r.readerTenant(), "?"));
            exposed.addAll(tenants);
        }
        return new BlastRadius(responses.size(), delivered, readers, exposed, responses, first, last);
    }

    private static String key(String node, String worker, int page, long epoch) {
        return node + '/' + worker + '/' + page + '/' + epoch;
    }

    /** Groups a read's per-slot writer rows into contiguous ranges with the same writer. */
    private static final class ReadBuilder {
        private final long event;
        private final String node;
        private final String worker;
        private final int page, slotFrom, slotTo;
        private final long epoch;
        private final Instant readAt;
        private final List<SlotWriter> writers = new ArrayList<>();

        ReadBuilder(long event, String node, String worker, int page, long epoch, int slotFrom, int slotTo, Instant readAt) {
            this.event = event;
            this.node = node;
            this.worker = worker;
            this.page = page;
            this.epoch = epoch;
            this.slotFrom = slotFrom;
            this.slotTo = slotTo;
            this.readAt = readAt;
        }

        void slot(int slot, String kind, long request, String tenant, long epoch, Instant at) {
            if (!writers.isEmpty()) {
                SlotWriter last = writers.getLast();
                if (last.slotTo() == slot && last.kind().equals(kind) && last.writerRequest() == request
                        && last.writerEpoch() == epoch && Objects.equals(last.writtenAt(), at)) {
                    writers.set(writers.size() - 1, new SlotWriter(last.slotFrom(), slot + 1, kind, request, tenant, epoch, at));
                    return;
                }
            }
            writers.add(new SlotWriter(slot, slot + 1, kind, request, tenant, epoch, at));
        }

        PageRead build(Map<String, List<TransferHop>> hops) {
            return new PageRead(node, worker, page, epoch, slotFrom, slotTo, readAt, writers,
                    hops.getOrDefault(key(node, worker, page, epoch), List.of()), event);
        }
    }
}
