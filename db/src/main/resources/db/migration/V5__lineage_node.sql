-- Lineage identity: several platform replicas (and engine restarts) write into one database, and page
-- numbers, pools ("decode-0") and - before page epochs started at a boot base - epochs repeat between
-- them. Every row now names the node whose process owns the pool; (node, worker, page, epoch) names one
-- page ownership, and every audit join is on (node, worker, page[, epoch]).
-- Rows written before this migration came from pools nobody named: they get the node 'unknown' (the same
-- value the journal gives events of its format 1) and are only ever compared among themselves.

ALTER TABLE kv_lineage ADD COLUMN node text NOT NULL DEFAULT 'unknown';
ALTER TABLE kv_lineage ALTER COLUMN node DROP DEFAULT;
COMMENT ON COLUMN kv_lineage.node IS 'Node (platform replica, engine node) that owns the pool: (node, worker, page) names a physical page, '
    '(node, worker, page, epoch) one ownership. ''unknown'' for rows from before V5.';
COMMENT ON COLUMN kv_lineage.worker IS 'Pool the page belongs to (prefill-0, decode-0), within node.';
COMMENT ON COLUMN kv_lineage.peer_worker IS 'Other end of a transfer, on the same node: destination pool (TRANSFER_OUT) or source pool (TRANSFER_IN).';
COMMENT ON COLUMN kv_lineage.epoch IS 'Allocation count of the page when this happened, from a per-start base that a restart never repeats; '
    '(node, worker, page, epoch) names one ownership.';

DROP INDEX kv_lineage_writes_by_page;
CREATE INDEX kv_lineage_writes_by_page ON kv_lineage (node, worker, page, event_time, event_id)
    INCLUDE (kind, slot_from, slot_to, request_id, tenant_id, epoch) WHERE kind IN (1, 3, 10);
DROP INDEX kv_lineage_transfers;
CREATE INDEX kv_lineage_transfers ON kv_lineage (node, worker, page, epoch) WHERE kind IN (2, 3);
DROP INDEX kv_lineage_read_finals;
CREATE INDEX kv_lineage_read_finals ON kv_lineage (request_id, node, worker, page, epoch) WHERE kind = 11;

ALTER TABLE safety_events ADD COLUMN node text NOT NULL DEFAULT 'unknown';
ALTER TABLE safety_events ALTER COLUMN node DROP DEFAULT;
COMMENT ON COLUMN safety_events.node IS 'Node whose engine saw it (worker is a pool of that node); ''unknown'' for rows from before V5.';

ALTER TABLE incidents ADD COLUMN node text NOT NULL DEFAULT 'unknown';
ALTER TABLE incidents ALTER COLUMN node DROP DEFAULT;
COMMENT ON COLUMN incidents.node IS 'Node of the worker the incident is about; ''unknown'' for incidents from before V5.';
DROP INDEX incidents_open;
CREATE INDEX incidents_open ON incidents (model_id, node, worker) WHERE status <> 'RESOLVED';
