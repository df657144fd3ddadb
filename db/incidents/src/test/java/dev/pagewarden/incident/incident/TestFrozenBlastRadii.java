package dev.pagewarden.incident.incident;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.IncidentService;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;

/** The frozen blast radius service over a test's own database, for service tests outside this package. */
public final class TestFrozenBlastRadii {
    private TestFrozenBlastRadii() {
    }

    /** Signing with {@code keys}, registered for {@code platform}'s node so the signatures verify. */
    public static FrozenBlastRadiusService over(DataSource ds, IncidentService incidents, PlatformPort platform, Clock clock,
                                                ReceiptKeys keys) {
        ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ofSeconds(60));
        try {
            registry.registerAll(keys, platform.nodeId());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return new FrozenBlastRadiusService(ds, incidents, new LineageQueries(ds), platform, keys, registry,
                TestAuditLogs.over(JdbcClient.create(ds)), new TransactionTemplate(new DataSourceTransactionManager(ds)), clock);
    }

    /** As above with a fresh key set. */
    public static FrozenBlastRadiusService over(DataSource ds, IncidentService incidents, PlatformPort platform, Clock clock) {
        return over(ds, incidents, platform, clock, ReceiptKeys.generate("pw"));
    }
}
