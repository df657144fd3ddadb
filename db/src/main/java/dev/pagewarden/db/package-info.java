/**
 * PostgreSQL persistence: Flyway migrations, JPA entities, and the COPY-based lineage writer.
 * Packages: journal (local WAL), lineage (sink, COPY shipper, partitions), audit (queries), schema (Flyway).
 */
package dev.pagewarden.db;
