-- Tenant quota buckets shared by every platform replica, kept by Bucket4j's PostgreSQL backend
-- (SELECT ... FOR UPDATE per bucket). One row per tenant, limit kind and limit value: a changed limit
-- starts a fresh bucket. Only Bucket4j reads or writes the state.
CREATE TABLE quota_buckets (
    id    text  PRIMARY KEY,
    state bytea
);
COMMENT ON TABLE quota_buckets IS 'Bucket4j token buckets for tenant quotas (requests and tokens per minute), shared by all replicas.';
