-- Pages on demand: when a decode pool runs out, a running request's pages are taken back for others (a
-- preemption). Each such page gets one PREEMPT (12) step, followed by its RELEASE; the request is
-- re-prefilled later into pages of new epochs.
INSERT INTO lineage_kinds (code, name) VALUES (12, 'PREEMPT');
