-- Prefix cache: full prompt pages kept read-only in the prefill pool for later prompts of the same scope
-- (tenant and prompt cache key). CACHE (13) names a cached page's writer; REUSE (14) each request that read it
-- instead of computing it. Both carry the 64-bit digest of the scope in peer_epoch, so the audit tells a reuse
-- inside the scope (legitimate) from a read across scopes (an exposure) without storing the key itself.
INSERT INTO lineage_kinds (code, name) VALUES (13, 'CACHE'), (14, 'REUSE');

-- Exposure finder: the CACHE row of a reused page epoch.
CREATE INDEX kv_lineage_prefix_cache ON kv_lineage (node, worker, page, epoch) WHERE kind = 13;

ALTER TABLE tenants ADD COLUMN prefix_cache boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN tenants.prefix_cache IS 'Whether the tenant''s prompts may reuse and leave cached prefix pages (only ever within the tenant, narrowed by the request''s prompt_cache_key).';
