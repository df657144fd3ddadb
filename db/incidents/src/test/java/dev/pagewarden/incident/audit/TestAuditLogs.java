package dev.pagewarden.incident.audit;

import org.springframework.jdbc.core.simple.JdbcClient;

/** The admin audit log over a test's own database, for service tests outside this package. */
public final class TestAuditLogs {
    private TestAuditLogs() {
    }

    public static AdminAuditLog over(JdbcClient jdbc) {
        return new AdminAuditLog(jdbc);
    }
}
