package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;
import java.io.IOException;
import java.time.Duration;

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
    LineageShipper lineageShipper(Journal journal, DataSource dataSource, PagewardenProperties properties) {
        LineageShipper shipper = new LineageShipper(journal, dataSource,
                new PartitionManager(2, properties.audit().retentionDays()),
                new LineageShipper.Config(5_000, Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofHours(1)));
        shipper.start();
        return shipper;
    }

    /** Ed25519 keys kept under {@code <home>/keys} (owner-only files); created on first start, rotatable. */
    @Bean
    ReceiptKeyStore receiptKeyStore(PagewardenProperties properties) throws IOException {
        ReceiptKeyStore store = ReceiptKeyStore.open(properties.keysDir(), "pw");
        LOG.info("receipt signing key {} (public keys: {}) from {}", store.keys().currentKeyId(),
                store.keys().publishedKeys().keySet(), properties.keysDir());
        return store;
    }

    @Bean
    ReceiptKeys receiptKeys(ReceiptKeyStore store) {
        return store.keys();
    }

    @Bean
    LineageQueries lineageQueries(DataSource dataSource) {
        return new LineageQueries(dataSource);
    }

    @Bean
    ReceiptAudit receiptAudit(DataSource dataSource, ReceiptKeys keys) {
        return new ReceiptAudit(dataSource, keys::publicKeys);
    }
}
