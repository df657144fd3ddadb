package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.platform.audit.SafetyEventRecorder;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static dev.pagewarden.platform.adminport.Await.until;

/**
 * The admin UI tests' common ground on the default platform: one admin user per role (named with
 * the test class's own prefix, so classes sharing the platform do not collide), a logged-in session
 * as any of them, and a fresh incident opened by a detector event.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AdminUiTest extends PlatformTest {
    static final String PASSWORD = "correct-horse-battery";

    @Autowired
    AdminUserService users;
    @Autowired
    SafetyEventRecorder safety;
    @Autowired
    IncidentService incidents;
    @Autowired
    JdbcClient jdbc;

    private final String prefix;

    AdminUiTest(String userPrefix) {
        this.prefix = userPrefix;
    }

    @BeforeAll
    void users() {
        for (AdminRole role : AdminRole.values()) {
            if (users.findByName(prefix + role.label()).isEmpty()) {
                users.create(prefix + role.label(), PASSWORD, role, "test");
            }
        }
    }

    UiSession as(AdminRole role) {
        return new UiSession(baseUrl()).login(prefix + role.label(), PASSWORD);
    }

    /** A detector event on a worker of its own, so it opens a fresh incident; returns the incident id. */
    long incident() {
        String worker = "w-" + UUID.randomUUID();
        safety.onEvent(new SafetyEvent(SafetyEvent.Type.OWNER_TAG_MISMATCH, SafetyEvent.Severity.CRITICAL, worker, 7,
                "t_x", List.of(3), List.of(1L), Instant.now(), "expected t_x, found t_y"));
        until(() -> incidents.list().stream().anyMatch(i -> i.worker().equals(worker)), "the incident to open");
        return incidents.list().stream().filter(i -> i.worker().equals(worker)).findFirst().orElseThrow().id();
    }
}
