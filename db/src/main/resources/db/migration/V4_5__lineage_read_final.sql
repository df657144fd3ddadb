-- Receipts v2: the final slot range of every page epoch a request read.
-- BIND_READ (5) records a page epoch's first read with the slots cached then; READ_FINAL (11) is
-- emitted once per page epoch when the reader is done (before its RELEASE), with every slot it read
-- there by the end. The audit takes a read's range and its slots' writers from it.
INSERT INTO lineage_kinds (code, name) VALUES (11, 'READ_FINAL');

-- Audit of a request / a receipt: the READ_FINAL of each page epoch it read (one row per page epoch read).
CREATE INDEX kv_lineage_read_finals ON kv_lineage (request_id, worker, page, epoch) WHERE kind = 11;
