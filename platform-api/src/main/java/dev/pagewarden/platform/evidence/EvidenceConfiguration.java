package dev.pagewarden.platform.evidence;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.db.audit.KeyTrust;
import dev.pagewarden.db.evidence.ChainVerifier;
import dev.pagewarden.db.evidence.Checkpoints;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/** Checkpoints of this node's chains, and the verifier of every chain (all replicas'). */
@Configuration(proxyBeanMethods = false)
class EvidenceConfiguration {
    static final int TIMEOUT_SECONDS = 30;

    @Bean
    Checkpoints checkpoints(DataSource dataSource, ReceiptKeys keys, PagewardenProperties properties, Clock clock) {
        return new Checkpoints(dataSource, keys, properties.engine().node(), TIMEOUT_SECONDS, clock);
    }

    /**
     * Where every signed checkpoint is also appended, one line each, outside the database
     * ({@code pagewarden.evidence.checkpoint-archive}; empty: nowhere). An operator archives the file (or ships it off
     * the host); {@code audit verify --checkpoints FILE} and {@code /admin/api/audit/verify} hold the chains to it.
     */
    @Bean
    CheckpointArchive checkpointArchive(@Value("${pagewarden.evidence.checkpoint-archive:}") String file) {
        return new CheckpointArchive(file == null || file.isBlank() ? null : Path.of(file));
    }

    @Bean(destroyMethod = "close")
    CheckpointWriter checkpointWriter(Checkpoints checkpoints, CheckpointArchive archive,
                                      @Value("${pagewarden.evidence.checkpoint-interval:5m}") Duration every) {
        return new CheckpointWriter(checkpoints, archive, every);
    }

    /** Checkpoints and summaries of every replica verify by the keys that chain to the pinned trust only. */
    @Bean
    ChainVerifier chainVerifier(KeyTrust trust) {
        return new ChainVerifier(trust, TIMEOUT_SECONDS);
    }
}
