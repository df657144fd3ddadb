package dev.pagewarden.db.audit;

/**
 * All audit SQL in one place. A physical page is (node, worker, page): pools and page numbers repeat on
 * every node, so every join on a page names the node too, and a page ownership is (node, worker, page,
 * epoch). The heart is {@link #lastWriter}: for one read slot, the last event before
 * the read that put bytes into that slot of that physical page, in any epoch. Pages are not zeroed
 * between owners, so a page's epoch says who may read it, not whose data is in it: in the 2026 bug the
 * reader owned the new epoch and never wrote it, and the data belonged to the previous epoch's writer.
 * A SCRUB (kind 10) zeroes the page, so after it the slot holds nobody's data: whatever request and tenant
 * the engine recorded on the scrub row (the quarantined page's last owner), the writer is NULL.
 *
 * <p>Attribution never crosses an engine start. Device memory is not carried from one start to the next, so a
 * slot the current start never wrote holds nobody's data, however recently an earlier start wrote it. An
 * engine start is the event id's top 24 bits (random per start, see {@code LineageIds}); every event of one
 * pool comes from one start's ids.
 */
final class LineageSql {
    private LineageSql() {
    }

    /**
     * Lateral subquery over alias {@code rd} and {@code s.slot}: the last write into that slot of that
     * physical page strictly before the event ({@code time}, {@code id}) of {@code rd} and in the same engine
     * start; served by kv_lineage_writes_by_page. The backward walk stops at the first write of an earlier
     * start (any slot) and then finds no writer, so it never reaches across a restart. A SCRUB names no writer.
     */
    private static String lastWriter(String time, String id) {
        return """
                SELECT y.kind, y.request_id, y.tenant_id, y.epoch, y.event_time FROM (
                SELECT x.kind, CASE WHEN x.kind = 10 THEN NULL ELSE x.request_id END AS request_id,
                       CASE WHEN x.kind = 10 THEN NULL ELSE x.tenant_id END AS tenant_id, x.epoch, x.event_time,
                       x.event_id
                  FROM kv_lineage x
                 WHERE x.node = rd.node AND x.worker = rd.worker AND x.page = rd.page
                   AND x.kind IN (1, 3, 10)
                   AND x.event_time <= %1$s
                   AND (x.event_time, x.event_id) < (%1$s, %2$s)
                   AND (x.kind = 10 OR (x.slot_from <= s.slot AND s.slot < x.slot_to)
                        OR (x.event_id >> 40) <> (%2$s >> 40))
                 ORDER BY x.event_time DESC, x.event_id DESC
                 LIMIT 1) y
                 WHERE (y.event_id >> 40) = (%2$s >> 40)""".formatted(time, id);
    }

    /** {@link #lastWriter} at a BIND_READ row {@code rd}: whose data a slot held at the first read. */
    static final String LAST_WRITER = lastWriter("rd.event_time", "rd.event_id");

    /**
     * The page epochs read, by their BIND_READ (first read) rows {@code b} that match {@code where}, each
     * with its range and the moment its slots' writers are taken at: with {@code finals} true, the final
     * range from the reader's READ_FINAL of that page epoch (every slot read by the end of the request;
     * its writers as of then, which includes the reader's own decode writes), else - and where no
     * READ_FINAL exists (engines before receipts v2) - the first read's range as of the first read.
     * Columns: event_id, event_time (first read), node, worker, page, epoch, request_id, tenant_id, slot_from,
     * slot_to, seen_time, seen_id.
     */
    private static String readsWithRange(String finals, String where) {
        return """
                SELECT b.event_id, b.event_time, b.node, b.worker, b.page, b.epoch, b.request_id, b.tenant_id, b.slot_from,
                       coalesce(f.slot_to, b.slot_to) AS slot_to, coalesce(f.event_time, b.event_time) AS seen_time,
                       coalesce(f.event_id, b.event_id) AS seen_id
                  FROM kv_lineage b
                  LEFT JOIN LATERAL (%s) f ON %s
                 WHERE b.kind = 5 AND %s""".formatted(READ_FINAL_OF_B, finals, where);
    }

    /** The reader's READ_FINAL of the page epoch of BIND_READ row {@code b}; served by kv_lineage_read_finals. */
    private static final String READ_FINAL_OF_B = """
            SELECT f.slot_from, f.slot_to, f.event_time, f.event_id FROM kv_lineage f
             WHERE f.kind = 11 AND f.request_id = b.request_id AND f.node = b.node AND f.worker = b.worker
               AND f.page = b.page AND f.epoch = b.epoch
             ORDER BY f.event_time DESC, f.event_id DESC
             LIMIT 1""";

    /**
     * One row per (page epoch read, slot) - and one row with slot NULL for a read of no slot - with who
     * last wrote that slot (see {@link #readsWithRange}), in read order. Columns: event_id, worker, page,
     * epoch, slot_from, slot_to, event_time, slot, then the writer's kind, request_id, tenant_id, epoch,
     * event_time (all NULL: never written), then the read's node.
     */
    private static String slotWriters(String reads) {
        return """
                SELECT rd.event_id, rd.worker, rd.page, rd.epoch, rd.slot_from, rd.slot_to, rd.event_time, s.slot,
                       w.kind, w.request_id, w.tenant_id, w.epoch, w.event_time, rd.node
                  FROM (%s) rd
                  LEFT JOIN LATERAL generate_series(rd.slot_from, rd.slot_to - 1) AS s(slot) ON true
                  LEFT JOIN LATERAL (%s) w ON s.slot IS NOT NULL
                 ORDER BY rd.event_time, rd.event_id, s.slot""".formatted(reads, lastWriter("rd.seen_time", "rd.seen_id"));
    }

    /** Request lineage: every page epoch the request read, final range, who wrote each slot (see {@link #slotWriters}). Param: request id. */
    static final String REQUEST_READS = slotWriters(readsWithRange("true", "b.request_id = ?"));

    /**
     * Transfer chain into the page epochs a request read: each TRANSFER_IN on such a page epoch, with the
     * matching TRANSFER_OUT's checksum on the sending side. Param: request id.
     */
    static final String REQUEST_TRANSFERS = """
            SELECT ti.worker, ti.page, ti.epoch, ti.peer_worker, ti.peer_page, ti.peer_epoch, ti.generation,
                   ti.slot_from, ti.slot_to, ti.checksum, o.checksum, ti.event_time, ti.request_id, ti.node
              FROM (SELECT DISTINCT node, worker, page, epoch FROM kv_lineage WHERE request_id = ? AND kind = 5) r
              JOIN kv_lineage ti ON ti.node = r.node AND ti.worker = r.worker AND ti.page = r.page
                                AND ti.epoch = r.epoch AND ti.kind = 3
              LEFT JOIN LATERAL (
                    SELECT o.checksum FROM kv_lineage o
                     WHERE o.kind = 2 AND o.node = ti.node AND o.worker = ti.peer_worker AND o.page = ti.peer_page
                       AND o.epoch = ti.peer_epoch AND o.peer_worker = ti.worker AND o.peer_page = ti.page
                       AND o.generation = ti.generation
                     ORDER BY o.event_time DESC LIMIT 1) o ON true
             ORDER BY ti.event_time, ti.event_id""";

    /**
     * Exposure finder, one row per (read, exposing writer) with the slot count. Two ways a reader gets
     * another tenant's data: (1) at its read (BIND_READ in [from, to)) a slot was last written by a
     * request of another tenant - the 2026 bug; (2) after it bound a page epoch and before it let go
     * of it (its RELEASE or DRAIN of that page epoch), another tenant's request wrote into that very
     * page epoch (a late transfer write landing in a reused page - only the owner ever writes its
     * page epoch, so any such write is foreign data under the reader; one that lands after the
     * reader has released the page lands in a free page the reader no longer reads); (3) it reused a
     * cached prefix page (REUSE) whose page epoch was not cached in the reader's scope - tenant and prompt
     * cache key, compared by their digest - before the read: a reuse inside the scope is legitimate, a read
     * across scopes (another tenant's, or the same tenant's under another key) exposes the page's writer.
     * Params: from, to, node, node, worker, worker (NULL = all), three times.
     */
    static final String EXPOSURES = """
            SELECT * FROM (
            SELECT rd.tenant_id, rd.request_id, w.tenant_id AS writer_tenant, w.request_id AS writer_request, rd.worker,
                   rd.page, rd.epoch, w.epoch AS writer_epoch, count(*) AS slots, rd.event_time, max(w.event_time),
                   rd.event_id, rd.node
              FROM kv_lineage rd
             CROSS JOIN LATERAL generate_series(rd.slot_from, rd.slot_to - 1) AS s(slot)
             CROSS JOIN LATERAL (%s) w
             WHERE rd.kind = 5 AND rd.event_time >= ? AND rd.event_time < ?
               AND (CAST(? AS text) IS NULL OR rd.node = ?)
               AND (CAST(? AS text) IS NULL OR rd.worker = ?)
               AND w.tenant_id IS NOT NULL AND w.tenant_id IS DISTINCT FROM rd.tenant_id
             GROUP BY rd.event_id, rd.event_time, rd.tenant_id, rd.request_id, w.tenant_id, w.request_id,
                      rd.node, rd.worker, rd.page, rd.epoch, w.epoch
            UNION ALL
            SELECT rd.tenant_id, rd.request_id, x.tenant_id, x.request_id, rd.worker, rd.page, rd.epoch, x.epoch,
                   sum(x.slot_to - x.slot_from), min(x.event_time), max(x.event_time), rd.event_id, rd.node
              FROM kv_lineage rd
              JOIN kv_lineage x ON x.node = rd.node AND x.worker = rd.worker AND x.page = rd.page AND x.epoch = rd.epoch
                               AND x.kind IN (1, 3) AND x.request_id <> rd.request_id
                               AND (x.event_time, x.event_id) > (rd.event_time, rd.event_id)
             WHERE rd.kind = 5 AND rd.event_time >= ? AND rd.event_time < ?
               AND NOT EXISTS (SELECT 1 FROM kv_lineage rel
                                WHERE rel.node = rd.node AND rel.worker = rd.worker AND rel.page = rd.page
                                  AND rel.epoch = rd.epoch
                                  AND rel.kind IN (6, 8) AND rel.request_id = rd.request_id
                                  AND (rel.event_time, rel.event_id) < (x.event_time, x.event_id))
               AND (CAST(? AS text) IS NULL OR rd.node = ?)
               AND (CAST(? AS text) IS NULL OR rd.worker = ?)
               AND x.tenant_id IS NOT NULL AND x.tenant_id IS DISTINCT FROM rd.tenant_id
             GROUP BY rd.event_id, rd.tenant_id, rd.request_id, x.tenant_id, x.request_id, rd.node, rd.worker,
                      rd.page, rd.epoch, x.epoch
            UNION ALL
            SELECT rd.tenant_id, rd.request_id, w.tenant_id, w.request_id, rd.worker, rd.page, rd.epoch, w.epoch,
                   rd.slot_to - rd.slot_from, rd.event_time, w.event_time, rd.event_id, rd.node
              FROM kv_lineage rd
             CROSS JOIN LATERAL (
                    SELECT x.request_id, x.tenant_id, x.epoch, x.event_time FROM kv_lineage x
                     WHERE x.node = rd.node AND x.worker = rd.worker AND x.page = rd.page AND x.epoch = rd.epoch
                       AND x.kind IN (1, 13) AND x.event_time <= rd.event_time
                       AND (x.event_time, x.event_id) < (rd.event_time, rd.event_id)
                     ORDER BY x.event_time DESC, x.event_id DESC
                     LIMIT 1) w
             WHERE rd.kind = 14 AND rd.event_time >= ? AND rd.event_time < ?
               AND (CAST(? AS text) IS NULL OR rd.node = ?)
               AND (CAST(? AS text) IS NULL OR rd.worker = ?)
               AND w.tenant_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM kv_lineage c
                                WHERE c.kind = 13 AND c.node = rd.node AND c.worker = rd.worker AND c.page = rd.page
                                  AND c.epoch = rd.epoch AND c.tenant_id = rd.tenant_id AND c.peer_epoch = rd.peer_epoch
                                  AND (c.event_time, c.event_id) < (rd.event_time, rd.event_id))
            ) e
             ORDER BY e.event_time, e.event_id, e.writer_request""".formatted(LAST_WRITER);

    /** The tenant a request belongs to: the tenant of its allocations (ALLOCATE rows). Param: request id. */
    static final String REQUEST_TENANT = """
            SELECT tenant_id FROM kv_lineage WHERE request_id = ? AND kind = 0 LIMIT 1""";

    /** Status and model of the reader requests (delivered = FINISHED). Param: bigint[] of ids. */
    static final String REQUEST_STATUS = "SELECT id, status, model FROM requests WHERE id = ANY (?)";

    /**
     * Receipt audit, step 1: the BIND_READ events a receipt names (by event id), each with the id of
     * its reader's RELEASE of that page epoch if that has arrived, and the range of its READ_FINAL of
     * it if that has. Param: bigint[] of event ids.
     */
    static final int FROZEN_TIMEOUT_S = 10;

    /**
     * The frozen blast radius covering a request whose day partition is gone: (disclosure, day, incident, digest,
     * writers and their tenants if the set lists the request as a reader, node, worker); the latest disclosure first.
     */
    static final String RECEIPT_FROZEN = """
            SELECT f.disclosure_id, to_char(q.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), f.incident_id, f.digest,
                   r.counterparts, r.counterpart_tenants, f.node, f.worker
              FROM requests q
              JOIN frozen_blast_radius f ON q.received_at BETWEEN f.window_from AND f.window_to
              LEFT JOIN frozen_blast_radius_requests r
                ON r.disclosure_id = f.disclosure_id AND r.side = 'reader' AND r.request_id = q.id
             WHERE q.id = ? AND q.tenant_id = ?
               AND to_regclass('kv_lineage_p' || to_char(q.received_at AT TIME ZONE 'UTC', 'YYYYMMDD')) IS NULL
             ORDER BY f.disclosure_id DESC LIMIT 1""";

    static final String RECEIPT_BINDS = """
            SELECT b.event_id, b.kind, b.worker, b.page, b.epoch, b.request_id, b.tenant_id, b.slot_from,
                   b.slot_to, rel.event_id, f.slot_from, f.slot_to, b.node
              FROM kv_lineage b
              LEFT JOIN LATERAL (
                    SELECT r.event_id FROM kv_lineage r
                     WHERE r.request_id = b.request_id AND r.kind = 6 AND r.node = b.node AND r.worker = b.worker
                       AND r.page = b.page AND r.epoch = b.epoch
                     LIMIT 1) rel ON true
              LEFT JOIN LATERAL (%s) f ON true
             WHERE b.event_id = ANY (?)""".formatted(READ_FINAL_OF_B);

    /**
     * Receipt audit of the cached prefix pages a version 4 receipt lists: each named REUSE event with the CACHE
     * event of its page epoch (the writer, its tenant and scope digest) if one came before it. Param: bigint[]
     * of event ids.
     */
    static final String RECEIPT_REUSES = """
            SELECT u.event_id, u.kind, u.node, u.worker, u.page, u.epoch, u.request_id, u.tenant_id, u.slot_from, u.slot_to,
                   u.peer_epoch, c.request_id, c.tenant_id, c.peer_epoch
              FROM kv_lineage u
              LEFT JOIN LATERAL (
                    SELECT c.request_id, c.tenant_id, c.peer_epoch FROM kv_lineage c
                     WHERE c.kind = 13 AND c.node = u.node AND c.worker = u.worker AND c.page = u.page
                       AND c.epoch = u.epoch AND (c.event_time, c.event_id) < (u.event_time, u.event_id)
                     ORDER BY c.event_time DESC, c.event_id DESC
                     LIMIT 1) c ON true
             WHERE u.event_id = ANY (?)""";

    /** Receipt audit: REUSE rows of a request from the same engine start (id prefix), to catch reuses a receipt left out. Params: request id, prefix. */
    static final String RECEIPT_ALL_REUSES = """
            SELECT event_id FROM kv_lineage
             WHERE request_id = ? AND kind = 14 AND (event_id >> 40) = ?""";

    /** Receipt audit: BIND_READ rows of a request from the same engine start (id prefix), to catch reads a receipt left out. Params: request id, prefix. */
    static final String RECEIPT_ALL_BINDS = """
            SELECT event_id FROM kv_lineage
             WHERE request_id = ? AND kind = 5 AND (event_id >> 40) = ?""";

    /**
     * Receipt audit, step 2: who last wrote each slot the named BIND_READs read (see {@link #slotWriters});
     * params: boolean (true: final ranges, version 2 receipts; false: first-read ranges, version 1), bigint[]
     * of event ids.
     */
    static final String RECEIPT_READS = slotWriters(readsWithRange("?", "b.event_id = ANY (?)"));

    /**
     * Receipt audit, step 3: writes by another request into a read page epoch after the read and
     * before the reader released it (the reader kept reading the page on every later step).
     * Param: bigint[] of event ids.
     */
    static final String RECEIPT_LATE_WRITES = """
            SELECT rd.event_id, rd.worker, rd.page, rd.epoch, x.slot_from, x.slot_to, x.kind, x.request_id,
                   x.tenant_id, x.epoch, rd.node
              FROM kv_lineage rd
              JOIN kv_lineage rel ON rel.request_id = rd.request_id AND rel.kind = 6 AND rel.node = rd.node
                                 AND rel.worker = rd.worker AND rel.page = rd.page AND rel.epoch = rd.epoch
              JOIN kv_lineage x ON x.node = rd.node AND x.worker = rd.worker AND x.page = rd.page AND x.epoch = rd.epoch
                               AND x.kind IN (1, 3) AND x.request_id <> rd.request_id
                               AND (x.event_time, x.event_id) > (rd.event_time, rd.event_id)
                               AND (x.event_time, x.event_id) < (rel.event_time, rel.event_id)
             WHERE rd.event_id = ANY (?) AND rd.kind = 5
             ORDER BY x.event_time, x.event_id""";
}
