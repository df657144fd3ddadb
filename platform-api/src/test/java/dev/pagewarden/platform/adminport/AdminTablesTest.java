package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.core.safety.SafetyEvent;
import org.junit.jupiter.api.Test;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static dev.pagewarden.platform.adminport.Await.until;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The forensics tables over HTTP: the incident list's filters, search, paging and CSV; the admin actions page;
 * the exposure finder keeping its form on bad input; the overview's tiles, banner and findings, read from PostgreSQL.
 */
class AdminTablesTest extends AdminUiTest {
    AdminTablesTest() {
        super("tables-");
    }

    /** A detector event naming {@code tenant}, on a worker of its own; returns the incident it opened. */
    private long incidentOf(String tenant, SafetyEvent.Severity severity) {
        String worker = "w-" + UUID.randomUUID();
        safety.onEvent(new SafetyEvent(SafetyEvent.Type.OWNER_TAG_MISMATCH, severity, worker, 7, tenant, List.of(3), List.of(1L),
                Instant.now(), "expected " + tenant));
        until(() -> incidents.list().stream().anyMatch(i -> i.worker().equals(worker))
                && jdbc.sql("SELECT count(*) FROM safety_events WHERE worker = :w").param("w", worker).query(Long.class).single() > 0,
                "the incident to open and its event to be recorded");
        return incidents.list().stream().filter(i -> i.worker().equals(worker)).findFirst().orElseThrow().id();
    }

    private static List<String> csvLines(EntityExchangeResult<String> r) {
        return Arrays.asList(r.getResponseBody().split("\r\n"));
    }

    @Test
    void incidentsAreFilteredSearchedPagedAndExported() {
        String tenant = "t_" + UUID.randomUUID().toString().substring(0, 8);
        long warning = incidentOf(tenant, SafetyEvent.Severity.WARNING);
        long critical = incidentOf(tenant, SafetyEvent.Severity.CRITICAL);
        long other = incidentOf("t_other", SafetyEvent.Severity.CRITICAL);
        String marker = "marker-" + UUID.randomUUID();
        jdbc.sql("UPDATE incidents SET title = :t WHERE id = :id").param("t", "Leak, \"" + marker + "\" case").param("id", critical).update();
        UiSession viewer = as(AdminRole.VIEWER);

        String byTenant = viewer.get("/admin/incidents?tenant=" + tenant).getResponseBody();
        assertThat(byTenant).contains("/admin/incidents/" + warning + "\"").contains("/admin/incidents/" + critical + "\"")
                .doesNotContain("/admin/incidents/" + other + "\"").contains("1–2 of 2");
        String critOfTenant = viewer.get("/admin/incidents?tenant=" + tenant + "&severity=critical&status=investigating").getResponseBody();
        assertThat(critOfTenant).contains("/admin/incidents/" + critical + "\"").doesNotContain("/admin/incidents/" + warning + "\"");
        assertThat(viewer.get("/admin/incidents?tenant=" + tenant + "&status=resolved").getResponseBody()).contains("No incidents.");
        assertThat(viewer.get("/admin/incidents?q=" + marker).getResponseBody()).contains("/admin/incidents/" + critical + "\"")
                .contains("1–1 of 1");
        assertThat(viewer.get("/admin/incidents?tenant=" + tenant + "&from=2001-01-01T00:00:00Z&to=2001-01-02T00:00:00Z")
                .getResponseBody()).as("a time range before both").contains("No incidents.");

        // one row a page, oldest first: page 2 is the critical one, and the pager links keep the filter
        String page2 = viewer.get("/admin/incidents?tenant=" + tenant + "&sort=id&dir=asc&size=1&page=2").getResponseBody();
        assertThat(page2).contains("/admin/incidents/" + critical + "\"").doesNotContain("/admin/incidents/" + warning + "\"")
                .contains("2–2 of 2").contains("page 2 of 2")
                .contains("href=\"/admin/incidents?tenant=" + tenant + "&amp;sort=id&amp;dir=asc&amp;size=1&amp;page=1\"");

        var bad = viewer.get("/admin/incidents?status=open");
        assertThat(bad.getStatus().value()).isEqualTo(400);
        assertThat(bad.getResponseBody()).contains("unknown status");

        var csv = viewer.get("/admin/incidents.csv?tenant=" + tenant + "&sort=id&dir=asc");
        assertThat(csv.getStatus().value()).isEqualTo(200);
        assertThat(csv.getResponseHeaders().getContentType().toString()).startsWith("text/csv");
        assertThat(csv.getResponseHeaders().getFirst("Content-Disposition")).isEqualTo("attachment; filename=\"incidents.csv\"");
        List<String> lines = csvLines(csv);
        assertThat(lines.getFirst()).isEqualTo("id,title,status,severity,model,node,worker,events,opened_at,first_event,last_event,resolved_at");
        assertThat(lines).hasSize(3);
        assertThat(lines.get(1)).startsWith(warning + ",").contains(",investigating,warning,");
        assertThat(lines.get(2)).startsWith(critical + ",\"Leak, \"\"" + marker + "\"\" case\",investigating,critical,");
    }

    @Test
    void overviewShowsCountsABannerForOpenCriticalIncidentsAndSweepFindingsFromTheDatabase() {
        long critical = incident();
        // a lineage sweep filing, written as the sweep writes it: the overview reads it from PostgreSQL, not memory
        String text = "lineage-exposure (critical) request 41 tenant t_r pages [9]: sweep-" + UUID.randomUUID();
        jdbc.sql("INSERT INTO incident_entries (incident_id, at, kind, actor, text) VALUES (:i, now(), 'DETECTOR', 'detector:lineage-exposure', :t)")
                .param("i", critical).param("t", text).update();
        String page = as(AdminRole.VIEWER).get("/admin").getResponseBody();
        assertThat(page).contains("id=\"critical-banner\"").contains("href=\"/admin/incidents/" + critical + "\"");
        assertThat(page).contains("id=\"tile-open-critical\"");
        long openCritical = jdbc.sql("SELECT count(*) FROM incidents WHERE status <> 'RESOLVED' AND severity = 'CRITICAL'")
                .query(Long.class).single();
        assertThat(page).containsPattern("id=\"tile-open-critical\"[^>]*>\\s*<span class=\"tile-value\">" + openCritical + "<");
        assertThat(page).contains(text).contains("lineage sweep").contains(">owner-tag-mismatch<")
                .doesNotContain("No safety events");
        assertThat(page.indexOf(text)).as("newest first: the sweep's filing came after the detector's event")
                .isLessThan(page.indexOf(">owner-tag-mismatch<"));
    }

    @Test
    void adminActionsAreFilteredPagedAndExported() {
        String actor = "tables-actor-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            jdbc.sql("INSERT INTO admin_audit (actor, action, target, details) VALUES (:a, :act, :t, :d)").param("a", actor)
                    .param("act", i == 2 ? "tenant.create" : "incident.note").param("t", "incident " + i).param("d", "n=" + i + ", \"x\"")
                    .update();
        }
        UiSession viewer = as(AdminRole.VIEWER);
        String byActor = viewer.get("/admin/audit/actions?actor=" + actor + "&action=incident").getResponseBody();
        assertThat(byActor).contains("1–2 of 2").contains("incident 0").contains("incident 1").doesNotContain(">incident 2<");
        String page2 = viewer.get("/admin/audit/actions?actor=" + actor + "&size=2&page=2").getResponseBody();
        assertThat(page2).contains("3–3 of 3").contains(">incident 0<").doesNotContain(">incident 2<").contains("page 2 of 2");
        assertThat(viewer.get("/admin/audit/actions?actor=" + actor + "&from=2001-01-01T00:00:00Z&to=2001-01-02T00:00:00Z")
                .getResponseBody()).contains("No admin actions match.");

        var csv = viewer.get("/admin/audit/actions.csv?actor=" + actor);
        assertThat(csv.getResponseHeaders().getContentType().toString()).startsWith("text/csv");
        assertThat(csv.getResponseHeaders().getFirst("Content-Disposition")).isEqualTo("attachment; filename=\"admin-actions.csv\"");
        List<String> lines = csvLines(csv);
        assertThat(lines.getFirst()).isEqualTo("id,at,actor,action,target,details");
        assertThat(lines).hasSize(4);
        assertThat(lines.get(1)).contains("," + actor + ",tenant.create,incident 2,\"n=2, \"\"x\"\"\"");
    }

    @Test
    void exposureFinderKeepsTheFormAndSaysWhatIsWrong() {
        var r = as(AdminRole.VIEWER).get("/admin/audit?from=yesterday&to=2026-11-30T05:00:00Z&node=n-kept&worker=decode-9");
        assertThat(r.getStatus().value()).isEqualTo(400);
        assertThat(r.getResponseBody()).contains("id=\"exposure-error\"").contains("is not a time")
                .contains("value=\"yesterday\"").contains("value=\"n-kept\"").contains("value=\"decode-9\"")
                .contains("id=\"lookup\"");
        var wide = as(AdminRole.VIEWER).get("/admin/audit?from=2026-01-01T00:00:00Z&to=2026-11-30T05:00:00Z");
        assertThat(wide.getStatus().value()).isEqualTo(400);
        assertThat(wide.getResponseBody()).contains("at most 31 days").contains("value=\"2026-01-01T00:00:00Z\"");
    }
}
