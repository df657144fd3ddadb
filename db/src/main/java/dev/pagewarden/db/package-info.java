/**
 * PostgreSQL persistence: Flyway migrations, JPA entities, and the COPY-based lineage writer.
 * Not built yet: see the lineage-audit issue.
 */
package dev.pagewarden.db;
