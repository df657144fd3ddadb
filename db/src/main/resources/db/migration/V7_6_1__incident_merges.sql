-- An incident merged into another (an outside report whose named responses another incident's blast radius
-- already covers): closed, pointing at the incident that carries on. A new nullable column; earlier releases
-- neither write nor read it. Its foreign key is NOT VALID: every existing row is NULL, and no scan of incidents
-- holds up the upgrade.

ALTER TABLE incidents ADD COLUMN merged_into bigint;
ALTER TABLE incidents ADD CONSTRAINT incidents_merged_into_fkey FOREIGN KEY (merged_into) REFERENCES incidents (id) NOT VALID;
COMMENT ON COLUMN incidents.merged_into IS 'The incident this one was merged into (it is RESOLVED since); null when not merged.';
