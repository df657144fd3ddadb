-- A tenant's share in fair admission: among tenants with requests waiting, one of weight 2 is served twice the
-- tokens of one of weight 1. Every existing tenant starts at the default.
ALTER TABLE tenants ADD COLUMN weight integer NOT NULL DEFAULT 1;
-- NOT VALID: the rows there are hold the default; replicas of the previous release never write the column
ALTER TABLE tenants ADD CONSTRAINT tenants_weight_check CHECK (weight BETWEEN 1 AND 100) NOT VALID;
COMMENT ON COLUMN tenants.weight IS 'Fair-admission weight (1..100): share of served tokens among tenants waiting at once.';
