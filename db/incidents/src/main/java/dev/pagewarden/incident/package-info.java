/**
 * The incident domain, used by the platform and the admin UI alike and depending on neither: package by
 * feature (incident: incidents, the lineage sweep and the frozen blast radius; disclosure: disclosures, their
 * reviews, tenant notices and webhooks; retention: legal holds; report: outside reports; audit: the admin
 * audit log and its evidence chain; input: checks on stored text). What it needs from the running platform
 * comes through {@link dev.pagewarden.incident.PlatformPort}; what the platform needs from the admin UI's
 * security through {@link dev.pagewarden.incident.AdminAccess}. Spring Boot finds
 * {@link dev.pagewarden.incident.IncidentsConfiguration} on the class path.
 */
package dev.pagewarden.incident;
