package dev.pagewarden.platform.adminport;

import dev.pagewarden.incident.incident.IncidentService;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.web.PostgresWebSessionStore;
import dev.pagewarden.core.safety.SafetyEvent;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.web.server.WebSession;
import reactor.core.scheduler.Schedulers;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.pagewarden.platform.adminport.Await.until;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may do what in the admin UI: logged-out visitors see only the login form and {@code /status};
 * a viewer reads but cannot act; a responder works incidents but cannot publish; only an admin
 * manages users. Also: CSRF, logout, disabled users, the initial admin, the admin audit trail.
 */
class AdminUiAccessTest extends AdminUiTest {

    @Autowired
    DataSource dataSource;

    AdminUiAccessTest() {
        super("t-");
    }

    @Test
    void loggedOutVisitorsSeeOnlyTheLoginFormAndStatus() {
        UiSession anon = new UiSession(baseUrl());
        for (String page : List.of("/admin", "/admin/incidents", "/admin/users", "/admin/incidents/1", "/admin/overview/panel")) {
            var r = anon.get(page);
            assertThat(r.getStatus().value()).as(page).isEqualTo(302);
            assertThat(UiSession.location(r)).as(page).endsWith("/admin/login");
        }
        assertThat(anon.get("/admin/login").getStatus().value()).isEqualTo(200);
        assertThat(anon.get("/status").getStatus().value()).isEqualTo(200);
        assertThat(anon.get("/status.json").getStatus().value()).isEqualTo(200);
        assertThat(client().get().uri("/admin/api/tenants").exchange().returnResult(String.class).getStatus().value())
                .isEqualTo(401);
        long id = incident();
        var post = anon.post("/admin/incidents/" + id + "/status", "status", "resolved");
        assertThat(post.getStatus().is2xxSuccessful() || post.getStatus().is3xxRedirection() && !UiSession.location(post)
                .endsWith("/admin/incidents/" + id)).isTrue();
        assertThat(incidents.get(id).status().label()).isEqualTo("investigating");
    }

    @Test
    void initialAdminExistsAndWrongPasswordsAndDisabledUsersAreRefused() {
        assertThat(users.findByName("admin")).get().extracting(u -> u.role()).isEqualTo(AdminRole.ADMIN);
        assertThat(jdbc.sql("SELECT password_hash FROM admin_users WHERE username = 'admin'").query(String.class).single())
                .startsWith("{bcrypt}");
        UiSession s = new UiSession(baseUrl());
        s.get("/admin/login");
        var r = s.post("/admin/login", "username", "t-viewer", "password", "wrong-password-123");
        assertThat(UiSession.location(r)).endsWith("/admin/login?error");
        users.create("t-gone-" + System.nanoTime() % 100000, PASSWORD, AdminRole.ADMIN, "test");
        String gone = users.list().stream().filter(u -> u.username().startsWith("t-gone-")).findFirst().orElseThrow().username();
        users.setEnabled(gone, false, "test");
        s.get("/admin/login");
        assertThat(UiSession.location(s.post("/admin/login", "username", gone, "password", PASSWORD)))
                .endsWith("/admin/login?error");
    }

    @Test
    void viewerReadsButCannotAct() {
        UiSession viewer = as(AdminRole.VIEWER);
        long id = incident();
        assertThat(viewer.get("/admin").getStatus().value()).isEqualTo(200);
        assertThat(viewer.get("/admin/incidents").getResponseBody()).contains("owner-tag-mismatch");
        var page = viewer.get("/admin/incidents/" + id);
        assertThat(page.getStatus().value()).isEqualTo(200);
        assertThat(page.getResponseBody()).doesNotContain("id=\"make-private\"");
        assertThat(viewer.post("/admin/incidents/" + id + "/status", "status", "identified").getStatus().value()).isEqualTo(403);
        assertThat(viewer.post("/admin/incidents/" + id + "/model-private").getStatus().value()).isEqualTo(403);
        assertThat(viewer.get("/admin/users").getStatus().value()).isEqualTo(403);
        assertThat(incidents.get(id).status().label()).isEqualTo("investigating");
        // the admin API on a viewer's session: reads yes, writes no
        viewer.api(HttpMethod.GET, "/admin/api/tenants").exchange().expectStatus().isOk();
        viewer.api(HttpMethod.PUT, "/admin/api/models/" + MODEL + "/visibility").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("private", true)).exchange().expectStatus().isForbidden();
    }

    @Test
    void responderWorksIncidentsButCannotPublishOrManageUsers() {
        UiSession responder = as(AdminRole.RESPONDER);
        long id = incident();
        var r = responder.post("/admin/incidents/" + id + "/status", "status", "identified");
        assertThat(r.getStatus().value()).isEqualTo(303 == r.getStatus().value() ? 303 : 302);
        assertThat(incidents.get(id).status().label()).isEqualTo("identified");
        assertThat(responder.post("/admin/incidents/" + id + "/notes", "text", "looking at decode-0").getStatus()
                .is3xxRedirection()).isTrue();
        assertThat(incidents.timeline(id)).extracting(e -> e.text()).contains("looking at decode-0",
                "status investigating -> identified");
        assertThat(responder.post("/admin/disclosures/1/publish").getStatus().value()).isEqualTo(403);
        assertThat(responder.post("/admin/users", "username", "sneaky", "password", PASSWORD, "role", "admin")
                .getStatus().value()).isEqualTo(403);
        assertThat(users.findByName("sneaky")).isEmpty();
        // going backwards is refused with the reason
        var back = responder.post("/admin/incidents/" + id + "/status", "status", "investigating");
        assertThat(back.getStatus().value()).isEqualTo(400);
        assertThat(back.getResponseBody()).contains("can only move forward");
    }

    @Test
    void formsWithoutTheCsrfTokenAreRefused() {
        UiSession responder = as(AdminRole.RESPONDER);
        long id = incident();
        assertThat(responder.post("/admin/incidents/" + id + "/status", false, "status", "identified").getStatus().value())
                .isEqualTo(403);
        assertThat(incidents.get(id).status().label()).isEqualTo("investigating");
    }

    @Test
    void adminManagesUsersAndEveryActionIsAudited() {
        UiSession admin = as(AdminRole.ADMIN);
        String name = "new-" + System.nanoTime() % 1_000_000;
        assertThat(admin.post("/admin/users", "username", name, "password", PASSWORD, "role", "viewer").getStatus().value())
                .isEqualTo(200);
        assertThat(users.findByName(name)).get().extracting(u -> u.role()).isEqualTo(AdminRole.VIEWER);
        admin.post("/admin/users/" + name + "/role", "role", "publisher");
        assertThat(users.findByName(name)).get().extracting(u -> u.role()).isEqualTo(AdminRole.PUBLISHER);
        var bad = admin.post("/admin/users", "username", "x", "password", "short", "role", "viewer");
        assertThat(bad.getStatus().value()).isEqualTo(400);
        assertThat(bad.getResponseBody()).contains("username must be");
        List<Map<String, Object>> audit = jdbc.sql("SELECT actor, action, target FROM admin_audit WHERE target = :t ORDER BY id")
                .param("t", name).query().listOfRows();
        assertThat(audit).extracting(m -> m.get("action")).containsExactly("admin_user.create", "admin_user.role");
        assertThat(audit).extracting(m -> m.get("actor")).containsOnly("t-admin");
        // admin API calls on the bearer token are audited too
        admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "audited")).exchange().expectStatus().isCreated();
        until(() -> jdbc.sql("SELECT count(*) FROM admin_audit WHERE actor = 'admin-token' AND target = '/admin/api/tenants'")
                .query(Long.class).single() > 0, "the API call in the admin audit");
    }

    @Test
    void logoutEndsTheSession() {
        UiSession viewer = as(AdminRole.VIEWER);
        var out = viewer.post("/admin/logout");
        assertThat(UiSession.location(out)).endsWith("/admin/login?logout");
        assertThat(viewer.get("/admin").getStatus().value()).isEqualTo(302);
    }

    /**
     * The session is in PostgreSQL: a second replica (its own store over the same database) knows it; login
     * gives the browser a new session id and the one from before login is dead; logout deletes it everywhere.
     */
    @Test
    void sessionsAreInPostgresForEveryReplicaRotatedOnLoginAndDeletedOnLogout() {
        PostgresWebSessionStore otherReplica = new PostgresWebSessionStore(dataSource, Clock.systemUTC(), Duration.ofMinutes(30),
                Duration.ofSeconds(3), Schedulers.boundedElastic());
        Duration call = Duration.ofSeconds(10);
        UiSession browser = new UiSession(baseUrl());
        browser.get("/admin/login");
        String beforeLogin = browser.cookie("SESSION");
        assertThat(beforeLogin).as("the login form's session (its CSRF token)").isNotNull();
        browser.login("t-" + AdminRole.RESPONDER.label(), PASSWORD);
        String session = browser.cookie("SESSION");
        assertThat(session).isNotNull().isNotEqualTo(beforeLogin);
        assertThat(otherReplica.retrieveSession(beforeLogin).block(call)).as("the id from before login").isNull();
        WebSession seen = otherReplica.retrieveSession(session).block(call);
        assertThat(seen).isNotNull();
        SecurityContext context = seen.getAttribute("SPRING_SECURITY_CONTEXT");
        assertThat(context.getAuthentication().getName()).isEqualTo("t-" + AdminRole.RESPONDER.label());

        assertThat(UiSession.location(browser.post("/admin/logout"))).endsWith("/admin/login?logout");
        assertThat(otherReplica.retrieveSession(session).block(call)).as("after logout").isNull();
    }

    @Test
    void eventsOnTheSameWorkerWithinTheWindowJoinTheOpenIncident() {
        String worker = "w-" + UUID.randomUUID();
        for (int i = 0; i < 2; i++) {
            safety.onEvent(new SafetyEvent(SafetyEvent.Type.CHECKSUM_MISMATCH, SafetyEvent.Severity.CRITICAL, worker, 10 + i,
                    "t_x", List.of(i), List.of(1L), Instant.now(), "crc"));
        }
        until(() -> incidents.list().stream().anyMatch(x -> x.worker().equals(worker) && x.events() == 2),
                "both events in one incident");
        assertThat(incidents.list().stream().filter(x -> x.worker().equals(worker)).count()).isEqualTo(1);
        dev.pagewarden.incident.incident.Incident opened = incidents.list().stream().filter(x -> x.worker().equals(worker))
                .findFirst().orElseThrow();
        long id = opened.id();
        assertThat(opened.node()).as("this replica's node").isEqualTo(safety.node());
        assertThat(incidents.timeline(id)).filteredOn(e -> e.kind().equals("DETECTOR")).hasSize(2);
        // the pool of the same name on another replica is another pool: its signal opens an incident of its own
        long other = incidents.file(new IncidentService.Signal("lineage-exposure", "CRITICAL", "other-replica", worker,
                13, "t_x", List.of(1), Instant.now(), "exposure"));
        assertThat(other).isNotEqualTo(id);
        assertThat(incidents.list()).filteredOn(x -> x.id() == other).singleElement()
                .satisfies(x -> assertThat(List.of(x.node(), x.worker(), x.events())).isEqualTo(List.of("other-replica", worker, 1)));
        // a resolved incident takes no more events: the next one opens a new incident
        incidents.setStatus(id, dev.pagewarden.incident.incident.Incident.Status.RESOLVED, "test");
        safety.onEvent(new SafetyEvent(SafetyEvent.Type.CHECKSUM_MISMATCH, SafetyEvent.Severity.CRITICAL, worker, 12,
                "t_x", List.of(1), List.of(1L), Instant.now(), "crc"));
        until(() -> incidents.list().stream().filter(x -> x.worker().equals(worker)).count() == 3, "a new incident");
    }

    @Test
    void overviewShowsEachWorkerAndRefreshesThroughHtmx() {
        UiSession viewer = as(AdminRole.VIEWER);
        String page = viewer.get("/admin").getResponseBody();
        assertThat(page).contains("hx-get=\"/admin/overview/panel\"").contains("hx-trigger=\"every 2s\"")
                .contains("prefill").contains("decode").contains(MODEL);
        var panel = viewer.get("/admin/overview/panel");
        assertThat(panel.getStatus().value()).isEqualTo(200);
        assertThat(panel.getResponseBody()).doesNotContain("<html").contains("id=\"pools\"");
        // static assets load without a session (the login page needs them)
        UiSession anon = new UiSession(baseUrl());
        assertThat(anon.get("/admin/assets/admin.css").getStatus().value()).isEqualTo(200);
        assertThat(anon.get("/admin/assets/htmx.min.js").getStatus().value()).isEqualTo(200);
    }

    @Test
    void labIsRefusedUnlessTheLabIsEnabled() {
        UiSession responder = as(AdminRole.RESPONDER);
        responder.api(HttpMethod.POST, "/admin/api/lab/replay").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("scenario", "incident-2026")).exchange().expectStatus().isForbidden()
                .expectBody().jsonPath("$.error.code").isEqualTo("lab_disabled");
        admin().post().uri("/admin/api/lab/replay").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("scenario", "incident-2026")).exchange().expectStatus().isForbidden();
        assertThat(responder.get("/admin/lab").getStatus().value()).isEqualTo(403);
        assertThat(responder.post("/admin/lab/replay", "scenario", "incident-2026").getStatus().value()).isEqualTo(403);
    }

    @Test
    void auditLooksUpARequestAndExportsExposuresAsCsv() {
        String key = newTenant("audited-" + UUID.randomUUID())[1];
        Map<?, ?> done = as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 4)).exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        String id = (String) done.get("id");
        UiSession viewer = as(AdminRole.VIEWER);
        assertThat(UiSession.location(viewer.get("/admin/audit/lookup?id=" + id))).endsWith("/admin/audit/requests/" + id);
        until(() -> {
            String page = viewer.get("/admin/audit/requests/" + id).getResponseBody();
            return page != null && page.contains("id=\"verdict\"") && page.contains(">OK<");
        }, "the request's lineage shipped and its receipt verified");
        assertThat(viewer.get("/admin/audit/requests/" + id).getResponseBody()).contains("isolated: every slot read was its own")
                .contains(">" + safety.node() + "/decode-0<"); // each page read names this replica's node and its pool
        var bad = viewer.get("/admin/audit/requests/not-a-number");
        assertThat(bad.getStatus().value()).isEqualTo(400);
        assertThat(bad.getResponseBody()).contains("is not a request id");
        String from = Instant.now().minusSeconds(3600).toString(), to = Instant.now().plusSeconds(60).toString();
        assertThat(viewer.get("/admin/audit?from=" + from + "&to=" + to).getResponseBody()).contains("id=\"exposure-count\">0<");
        assertThat(viewer.get("/admin/audit?from=" + from + "&to=" + to + "&node=" + safety.node() + "&worker=decode-0")
                .getResponseBody()).contains("id=\"exposure-count\">0<");
        var csv = viewer.get("/admin/audit/exposures.csv?from=" + from + "&to=" + to);
        assertThat(csv.getResponseHeaders().getContentType().toString()).startsWith("text/csv");
        assertThat(csv.getResponseBody()).startsWith("read_at,node,worker,page,read_epoch,reader_request,reader_tenant,");
        var badTime = viewer.get("/admin/audit/exposures.csv?from=yesterday&to=" + to);
        assertThat(badTime.getStatus().value()).isEqualTo(400);
        assertThat(badTime.getResponseBody()).contains("is not a time");
    }

    @Test
    void tenantsAreCreatedKeyedAndLimitedByAdminsOnly() {
        UiSession admin = as(AdminRole.ADMIN);
        var created = admin.post("/admin/tenants", "name", "ui-tenant");
        String path = UiSession.location(created);
        assertThat(path).startsWith("/admin/tenants/t_");
        admin.get(path);
        String page = admin.post(path + "/keys", "name", "ci").getResponseBody();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("id=\"new-key\">([^<]+)<").matcher(page);
        assertThat(m.find()).isTrue();
        as(m.group(1)).get().uri("/v1/models").exchange().expectStatus().isOk();
        admin.post(path + "/limits", "requestsPerMinute", "5", "tokensPerMinute", "", "maxConcurrent", "", "maxContext", "");
        assertThat(admin.get(path).getResponseBody()).contains("value=\"5\"");
        var bad = admin.post(path + "/limits", "requestsPerMinute", "-1");
        assertThat(bad.getStatus().value()).isEqualTo(400);
        assertThat(bad.getResponseBody()).contains("requests per minute must be a positive integer");
        UiSession viewer = as(AdminRole.VIEWER);
        assertThat(viewer.get("/admin/tenants").getResponseBody()).contains("ui-tenant").doesNotContain("id=\"create-tenant\"");
        assertThat(viewer.post("/admin/tenants", "name", "nope").getStatus().value()).isEqualTo(403);
    }
}
