package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.db.audit.KeyTrust;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.evidence.DropSummaries;
import dev.pagewarden.db.evidence.LineageChain;
import dev.pagewarden.db.evidence.RowChains;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.pagewarden.platform.engine.EngineHost;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationInitializer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The audit path: engine lineage events go to a local fsynced journal and from there, by the
 * shipper, into PostgreSQL; receipts are signed with the platform's Ed25519 keys and verified
 * against the shipped lineage.
 */
@Configuration(proxyBeanMethods = false)
class AuditConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(AuditConfiguration.class);
    private static final long SEGMENT_BYTES = 64L << 20;

    @Bean(destroyMethod = "close")
    Journal lineageJournal(PagewardenProperties properties) throws IOException {
        long cap = properties.audit().journalCap().toBytes();
        // segments of a quarter of the cap (at most 64 MiB), so acknowledged ones free space early
        long segment = Math.max(4096, Math.min(SEGMENT_BYTES, cap / 4));
        Journal journal = Journal.open(new Journal.Config(properties.journalDir(), segment, cap));
        Journal.Recovery r = journal.recovery();
        LOG.info("lineage journal {} ({} segments, cap {} bytes){}", properties.journalDir(), r.segments(), cap,
                r.tornBytesCut() > 0 ? "; cut a torn tail of " + r.tornBytesCut() + " bytes: " + r.tornDetail() : "");
        return journal;
    }

    @Bean(destroyMethod = "close")
    JournalingLineageSink lineageSink(Journal journal) {
        return new JournalingLineageSink(journal, 1 << 16, 4096);
    }

    @Bean(destroyMethod = "close")
    LineageShipper lineageShipper(Journal journal, DataSource dataSource, PagewardenProperties properties,
                                  AdminProperties admin, ReceiptKeys keys, Clock clock) {
        RowChains rows = new RowChains(properties.engine().node(), 30);
        // every batch is chained (lineage:<node>); an open incident holds its lineage from the start of its
        // blast-radius window; a partition dropped past retention leaves a signed summary
        LineageShipper shipper = new LineageShipper(journal, dataSource,
                new PartitionManager(2, properties.audit().retentionDays(), admin.incidentLookback())
                        .onDrop(new DropSummaries(keys, clock, 30)::beforeDrop)
                        .onAudit((c, id) -> rows.link(c, "admin_audit", id)),
                new LineageShipper.Config(5_000, Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofHours(1)),
                new LineageChain(properties.engine().node()));
        shipper.start();
        return shipper;
    }

    @Bean
    ReceiptKeyRegistry receiptKeyRegistry(DataSource dataSource, PagewardenProperties properties) {
        return new ReceiptKeyRegistry(dataSource, properties.audit().receiptKeyTimeout(), properties.audit().receiptKeyCache());
    }

    /**
     * Ed25519 keys kept under {@code <home>/keys} (owner-only files); created on first start, rotatable. Every
     * public key is registered in PostgreSQL before the replica signs anything. Fail closed: when the signing
     * key cannot be registered (database unreachable within the timeout, or its id held by another key) the
     * replica does not start, since its receipts could not be verified by the other replicas.
     */
    @Bean
    ReceiptKeyStore receiptKeyStore(PagewardenProperties properties, ReceiptKeyRegistry registry,
                                    Optional<FlywayMigrationInitializer> migrated) throws IOException {
        ReceiptKeyStore store = ReceiptKeyStore.open(properties.keysDir(), "pw");
        String node = properties.engine().node();
        String current = store.keys().currentKeyId();
        try {
            List<String> clashes = registry.registerAll(store.keys(), node);
            current = ReceiptKeyRotation.neverRetired(store, registry, node);
            if (!clashes.isEmpty()) {
                LOG.warn("receipt keys {} of {} are registered in PostgreSQL by another replica with other public keys "
                        + "(ids from before fingerprinted key ids); receipts this replica signed with them verify only here",
                        clashes, properties.keysDir());
            }
        } catch (SQLException | RuntimeException e) {
            throw new IllegalStateException("receipt signing key " + current + " (" + properties.keysDir()
                    + ") could not be registered in PostgreSQL (receipt_keys): " + e.getMessage()
                    + "; not starting, since receipts signed with it could not be verified by other replicas", e);
        }
        LOG.info("receipt signing key {} (public keys: {}) from {}, registered for node {}", current,
                store.keys().publishedKeys().keySet(), properties.keysDir(), node);
        return store;
    }

    @Bean
    ReceiptKeyRotation receiptKeyRotation(ReceiptKeyStore store, ReceiptKeyRegistry registry, PagewardenProperties properties,
                                          AdminAuditLog audit) {
        return new ReceiptKeyRotation(store, registry, properties.engine().node(), audit);
    }

    @Bean
    ReceiptKeys receiptKeys(ReceiptKeyStore store) {
        return store.keys();
    }

    @Bean
    LineageQueries lineageQueries(DataSource dataSource) {
        return new LineageQueries(dataSource);
    }

    /**
     * The receipt keys pinned outside the database: {@code pagewarden.audit.trust-file} (default
     * {@code <home>/receipt-trust}), written with this replica's root at first start (see {@link ReceiptTrustFile}).
     */
    @Bean
    ReceiptTrust receiptTrust(ReceiptKeyStore store, PagewardenProperties properties,
                              @Value("${pagewarden.audit.trust-file:}") String trustFile) throws IOException {
        return ReceiptTrustFile.ensure(trustFile(properties, trustFile), store);
    }

    static Path trustFile(PagewardenProperties properties, String configured) {
        return configured == null || configured.isBlank() ? properties.home().resolve("receipt-trust") : Path.of(configured);
    }

    /**
     * The keys verification trusts: the pinned roots and what chains to them, from this replica's key directory and
     * {@code receipt_keys} (every replica's). A key that is only in the database and does not chain is never used.
     */
    @Bean
    KeyTrust keyTrust(ReceiptTrust trust, ReceiptKeyRegistry registry, ReceiptKeys keys, PagewardenProperties properties,
                      @Value("${pagewarden.audit.trust-file:}") String trustFile) {
        return new KeyTrust(ReceiptTrustFile.watching(trustFile(properties, trustFile), trust), registry, keys::candidates,
                properties.audit().receiptKeyCache());
    }

    /**
     * Verifies receipts of every replica against the pinned trust; a stored receipt must name its row's request,
     * tenant and model (the served model's API id, or the model file the engine names in receipts).
     */
    @Bean
    ReceiptAudit receiptAudit(DataSource dataSource, KeyTrust trust, Optional<EngineHost> engine) {
        return ReceiptAudit.trusting(dataSource, trust, model -> engine.map(e -> e.receiptModelNames(model)).orElse(Set.of()));
    }
}
