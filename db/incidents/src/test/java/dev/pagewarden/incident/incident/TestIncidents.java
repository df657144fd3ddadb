package dev.pagewarden.incident.incident;

import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Clock;
import java.time.Duration;

/** The incident service and lineage sweep over a test's own database, for service tests outside this package. */
public final class TestIncidents {
    /** The admin UI defaults, except a lineage sweep interval of zero: these service tests run the sweep themselves. */
    public static final AdminProperties PROPERTIES = new AdminProperties(null, Duration.ofMinutes(30), Duration.ofMinutes(10),
            Duration.ofMinutes(5), 4, Duration.ofSeconds(1), Duration.ZERO,
            new AdminProperties.Throttle(5, 20, Duration.ofMinutes(15), Duration.ofMinutes(1), Duration.ofHours(1)));

    private TestIncidents() {
    }

    public static IncidentService over(JdbcClient jdbc, PlatformPort platform, AdminAuditLog audit, AdminProperties properties,
                                       LineageQueries lineage, TransactionTemplate tx, Clock clock) {
        return new IncidentService(jdbc, platform, audit, properties, lineage, tx, clock);
    }

    public static LineageSweep sweep(LineageQueries lineage, IncidentService incidents, JdbcClient jdbc, PlatformPort platform,
                                     Clock clock, AdminProperties properties, FrozenBlastRadiusService frozen) {
        return new LineageSweep(lineage, incidents, jdbc, platform, clock, properties, frozen);
    }
}
