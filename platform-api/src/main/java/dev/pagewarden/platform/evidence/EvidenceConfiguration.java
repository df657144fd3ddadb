package dev.pagewarden.platform.evidence;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.evidence.ChainVerifier;
import dev.pagewarden.db.evidence.Checkpoints;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;
import java.security.PublicKey;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Function;

/** Checkpoints of this node's chains, and the verifier of every chain (all replicas'). */
@Configuration(proxyBeanMethods = false)
class EvidenceConfiguration {
    static final int TIMEOUT_SECONDS = 30;

    @Bean
    Checkpoints checkpoints(DataSource dataSource, ReceiptKeys keys, PagewardenProperties properties, Clock clock) {
        return new Checkpoints(dataSource, keys, properties.engine().node(), TIMEOUT_SECONDS, clock);
    }

    @Bean(destroyMethod = "close")
    CheckpointWriter checkpointWriter(Checkpoints checkpoints,
                                      @Value("${pagewarden.evidence.checkpoint-interval:5m}") Duration every) {
        return new CheckpointWriter(checkpoints, every);
    }

    /** Checkpoints and summaries of every replica verify: a key id is looked up among this replica's keys, then in receipt_keys. */
    @Bean
    ChainVerifier chainVerifier(ReceiptKeys keys, ReceiptKeyRegistry registry) {
        return new ChainVerifier(keyLookup(keys, registry), TIMEOUT_SECONDS);
    }

    static Function<String, PublicKey> keyLookup(ReceiptKeys keys, ReceiptKeyRegistry registry) {
        return id -> {
            PublicKey own = keys == null ? null : keys.publicKeys().get(id);
            if (own != null) {
                return own;
            }
            try {
                return registry.find(id).orElse(null);
            } catch (SQLException e) {
                throw new IllegalStateException("receipt key " + id + " could not be looked up: " + e.getMessage(), e);
            }
        };
    }
}
