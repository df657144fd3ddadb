-- An incident merged into another (an outside report whose named responses another incident's blast radius
-- already covers): closed, pointing at the incident that carries on. A new nullable column; earlier releases
-- neither write nor read it.

ALTER TABLE incidents ADD COLUMN merged_into bigint REFERENCES incidents (id);
COMMENT ON COLUMN incidents.merged_into IS 'The incident this one was merged into (it is RESOLVED since); null when not merged.';
