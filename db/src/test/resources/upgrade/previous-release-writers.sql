-- The previous release's writers: the statements its code sends, copied from commit 753c036 (the release whose
-- last migration is V6_3), one block per statement under a "-- statement:" line naming it and its source file.
-- Named parameters (:name) are bound by PreviousReleaseWritersTest; '?' ones by position. Do not edit a block
-- to make it pass: a block that fails against the migrated schema is a replica of that release failing.

-- statement: lineage.stage (db/src/main/java/dev/pagewarden/db/lineage/LineageShipper.java)
CREATE TEMP TABLE IF NOT EXISTS kv_lineage_stage (LIKE kv_lineage) ON COMMIT DELETE ROWS

-- statement: lineage.copy (LineageShipper.java, columns from CopyBinaryEncoder.COLUMNS; the test has PostgreSQL write the binary stream of these columns on the previous release's schema)
COPY kv_lineage_stage (event_id, event_time, kind, node, worker, page, epoch, request_id, tenant_id, slot_from, slot_to, peer_worker, peer_page, peer_epoch, generation, checksum, ok) FROM STDIN (FORMAT binary)

-- statement: lineage.insert (LineageShipper.java)
INSERT INTO kv_lineage (event_id, event_time, kind, node, worker, page, epoch, request_id, tenant_id, slot_from, slot_to, peer_worker, peer_page, peer_epoch, generation, checksum, ok) SELECT event_id, event_time, kind, node, worker, page, epoch, request_id, tenant_id, slot_from, slot_to, peer_worker, peer_page, peer_epoch, generation, checksum, ok FROM kv_lineage_stage ON CONFLICT (event_id, event_time) DO NOTHING

-- statement: requests.insert (platform-api/src/main/java/dev/pagewarden/platform/audit/RequestRecord.java: the INSERT Hibernate issues for the entity's columns)
insert into requests (admitted_at, error_code, finish_reason, finished_at, first_token_at, generated_tokens, model, prompt_tokens, public_id, receipt, receipt_hash, received_at, status, stream, tenant_id, id) values (:admitted, :error, :finish, :finished, :first, :generated, :model, :prompt, :public, :receipt, :hash, :received, :status, :stream, :tenant, :id)

-- statement: safety_events.insert (platform-api/src/main/java/dev/pagewarden/platform/audit/SafetyEventRecorder.java)
INSERT INTO safety_events (event_time, type, severity, node, worker, request_id, tenant_id, pages, epochs, details)
VALUES (:time, :type, :severity, :node, :worker, :request, :tenant, :pages, :epochs, :details)

-- statement: incidents.open (admin-ui/src/main/java/dev/pagewarden/adminui/incident/IncidentService.java)
INSERT INTO incidents (title, model_id, node, worker, status, severity, opened_at, first_event, last_event, events)
VALUES (:title, :model, :node, :worker, 'INVESTIGATING', :sev, :now, :t, :t, 1) RETURNING id

-- statement: incidents.find-open (IncidentService.java)
SELECT id FROM incidents WHERE status <> 'RESOLVED' AND model_id IS NOT DISTINCT FROM :model
  AND node = :node AND worker = :worker AND last_event >= :since ORDER BY id DESC LIMIT 1 FOR UPDATE

-- statement: incidents.attach (IncidentService.java)
UPDATE incidents SET events = events + 1, last_event = greatest(last_event, :t),
  first_event = least(first_event, :t),
  severity = CASE WHEN :sev = 'CRITICAL' THEN 'CRITICAL' ELSE severity END WHERE id = :id

-- statement: incident_entries.insert (IncidentService.java)
INSERT INTO incident_entries (incident_id, at, kind, actor, text) VALUES (:i, :at, :k, :a, :t)

-- statement: incident_exposures.claim (IncidentService.java)
INSERT INTO incident_exposures (node, worker, page, read_epoch, reader_request, exposing_request, filed_at, filed_by)
VALUES (:node, :worker, :page, :epoch, :reader, :exposing, :now, :by) ON CONFLICT DO NOTHING

-- statement: incident_exposures.file (IncidentService.java)
UPDATE incident_exposures SET incident_id = :id WHERE node = :node AND worker = :worker AND page = :page
  AND read_epoch = :epoch AND reader_request = :reader AND exposing_request = :exposing

-- statement: lineage_sweep_position.advance (admin-ui/src/main/java/dev/pagewarden/adminui/incident/LineageSweep.java)
INSERT INTO lineage_sweep_position (id, swept_to, swept_by, updated_at) VALUES (true, :to, :node, now())
ON CONFLICT (id) DO UPDATE SET swept_to = excluded.swept_to, swept_by = excluded.swept_by, updated_at = now()
  WHERE lineage_sweep_position.swept_to < excluded.swept_to

-- statement: admin_audit.insert (admin-ui/src/main/java/dev/pagewarden/adminui/audit/AdminAuditLog.java)
INSERT INTO admin_audit (actor, action, target, details) VALUES (:actor, :action, :target, :details)

-- statement: disclosures.draft (admin-ui/src/main/java/dev/pagewarden/adminui/disclosure/DisclosureService.java)
INSERT INTO disclosures (incident_id, version, status, title, body, created_at, created_by)
VALUES (:i, :v, 'DRAFT', :t, :b, :now, :by) RETURNING id

-- statement: disclosures.review (DisclosureService.java)
UPDATE disclosures SET status = 'IN_REVIEW', reviewed_by = :by WHERE id = :id

-- statement: disclosures.publish (DisclosureService.java)
UPDATE disclosures SET status = 'PUBLISHED', published_at = :now, published_by = :by WHERE id = :id

-- statement: tenant_notices.insert (DisclosureService.java)
INSERT INTO tenant_notices (disclosure_id, tenant_id, created_at, relation) VALUES (:d, :t, :now, :rel)

-- statement: receipt_keys.register (db/src/main/java/dev/pagewarden/db/audit/ReceiptKeyRegistry.java)
INSERT INTO receipt_keys (key_id, algorithm, public_key, node) VALUES (?, ?, ?, ?) ON CONFLICT (key_id) DO NOTHING

-- statement: admin_sessions.insert (admin-ui/src/main/java/dev/pagewarden/adminui/web/PostgresWebSessionStore.java)
INSERT INTO admin_sessions (id_hash, created_at, last_access, max_idle_seconds, expires_at, attributes)
VALUES (:h, :created, :access, :idle, :expires, :data)

-- statement: model_visibility.set (platform-api/src/main/java/dev/pagewarden/platform/engine/ModelVisibilities.java)
WITH saved AS (
    INSERT INTO model_visibility (model_id, private, changed_at, changed_by) VALUES (?, ?, ?, ?)
    ON CONFLICT (model_id) DO UPDATE SET private = EXCLUDED.private,
        changed_at = EXCLUDED.changed_at, changed_by = EXCLUDED.changed_by
    RETURNING model_id)
SELECT pg_notify(?, ?) FROM saved

-- statement: quota_buckets.insert (platform-api/.../tenant/SharedBuckets.java: Bucket4j 8.18.0 PostgreSQLSelectForUpdateBasedProxyManager, table quota_buckets, columns id/state)
INSERT INTO quota_buckets(id, state) VALUES(?, null) ON CONFLICT(id) DO NOTHING

-- statement: quota_buckets.lock (Bucket4j, as above)
SELECT state as state FROM quota_buckets WHERE id = ? FOR UPDATE

-- statement: quota_buckets.update (Bucket4j, as above)
UPDATE quota_buckets SET state=? WHERE id=?

-- statement: lineage.partition (db/src/main/java/dev/pagewarden/db/lineage/PartitionManager.java; {name}, {from} and {to} are concatenated in, not bound: kv_lineage_pYYYYMMDD, the day, the next day)
CREATE TABLE IF NOT EXISTS {name} PARTITION OF kv_lineage FOR VALUES FROM ('{from} 00:00:00+00') TO ('{to} 00:00:00+00')
