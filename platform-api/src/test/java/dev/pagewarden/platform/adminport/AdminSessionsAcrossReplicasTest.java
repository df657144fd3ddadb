package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admin sessions follow their user on every replica: two platforms (this one, A, and a second, B, started on
 * the same PostgreSQL, as behind a load balancer). A session opened on A and used on B is refused on B at its
 * next request once its user is disabled on A (also after the user is enabled again), and loses the admin
 * powers once its user is demoted; a disabled publisher can no longer approve or publish. A password reset by
 * an admin ends the user's sessions and gives a one-time password that can only be changed; changing one's own
 * password ends one's other sessions. And four eyes needs two people: an admin who edits a draft, creates a
 * responder account and logs in as it cannot review the draft with it, nor publish after disabling it.
 */
class AdminSessionsAcrossReplicasTest extends AdminUiTest {
    private static final Pattern ONE_TIME = Pattern.compile("id=\"one-time-password\">([^<]+)<");
    private static final String NEW_PASSWORD = "a-brand-new-password-42";

    @Autowired
    EmbeddedPostgresServer db;

    private ConfigurableApplicationContext replicaB;
    private String b;

    AdminSessionsAcrossReplicasTest() {
        super("as-");
    }

    @BeforeAll
    void startSecondReplica() throws Exception {
        Path home = Files.createTempDirectory("pagewarden-replica-b");
        replicaB = StandalonePlatform.start("pagewarden.home=" + home, "pagewarden.engine.node-id=sessions-replica-b",
                "spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + db.user(),
                "spring.datasource.password=" + db.password(),
                "pagewarden.model.path=" + TestModels.stories260K(), "pagewarden.model.tokenizer=" + TestModels.tok512(),
                "pagewarden.admin-token=" + ADMIN_TOKEN, "pagewarden.engine.canary-interval=0s", "pagewarden.shutdown.grace=2s",
                "pagewarden.disclosure.reviewer-min-age=0s");
        b = "http://localhost:" + replicaB.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    void stopSecondReplica() {
        if (replicaB != null) {
            replicaB.close();
        }
    }

    private UiSession loginOnA(String user, String password) {
        return new UiSession(baseUrl()).login(user, password);
    }

    private static int status(EntityExchangeResult<?> r) {
        return r.getStatus().value();
    }

    /** Refused as not logged in: the UI sends to the login form. */
    private static void sentToLogin(EntityExchangeResult<?> r) {
        assertThat(status(r)).as("refused, to the login form").isEqualTo(302);
        assertThat(UiSession.location(r)).isEqualTo("/admin/login");
    }

    private int newTenantStatus(UiSession browser, String name) {
        return browser.api(HttpMethod.POST, "/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", name)).exchange().returnResult(String.class).getStatus().value();
    }

    private String tenant(String name) {
        return (String) admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", name)).exchange().expectStatus().isCreated()
                .expectBody(Map.class).returnResult().getResponseBody().get("id");
    }

    @Test
    void aDisabledAdminsSessionsAreRefusedOnTheNextRequestOnTheOtherReplica() {
        users.create("as-mallory", PASSWORD, AdminRole.ADMIN, "test");
        UiSession ui = loginOnA("as-mallory", PASSWORD).sameBrowserOn(b);
        UiSession api = loginOnA("as-mallory", PASSWORD).sameBrowserOn(b);
        UiSession idle = loginOnA("as-mallory", PASSWORD); // makes no request while mallory is disabled
        String tenant = tenant("mallory-target");
        assertThat(newTenantStatus(api, "mallory-before")).as("mallory's session works on B").isEqualTo(201);
        ui.get("/admin/users");

        assertThat(status(as(AdminRole.ADMIN).post("/admin/users/as-mallory/disable"))).isEqualTo(200);

        sentToLogin(ui.post("/admin/users", "username", "as-mallory2", "password", PASSWORD, "role", "admin"));
        assertThat(users.findByName("as-mallory2")).as("no admin created by the disabled user").isEmpty();
        api.api(HttpMethod.POST, "/admin/api/tenants/" + tenant + "/keys").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of()).exchange().expectStatus().isUnauthorized();
        assertThat(jdbc.sql("SELECT count(*) FROM api_keys WHERE tenant_id = :t").param("t", tenant).query(Long.class).single())
                .as("no key issued").isZero();

        // enabled again: a session from before the disabling stays ended
        assertThat(status(as(AdminRole.ADMIN).post("/admin/users/as-mallory/enable"))).isEqualTo(200);
        sentToLogin(idle.sameBrowserOn(b).get("/admin/tenants"));
        assertThat(newTenantStatus(loginOnA("as-mallory", PASSWORD).sameBrowserOn(b), "mallory-after"))
                .as("a new login works again").isEqualTo(201);
    }

    @Test
    void aDemotedAdminKeepsOnlyTheNewRoleOnTheNextRequestOnTheOtherReplica() {
        users.create("as-demoted", PASSWORD, AdminRole.ADMIN, "test");
        UiSession onB = loginOnA("as-demoted", PASSWORD).sameBrowserOn(b);
        String tenant = tenant("demoted-target");
        onB.api(HttpMethod.PUT, "/admin/api/tenants/" + tenant + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("requests_per_minute", 50)).exchange().expectStatus().isOk();

        assertThat(status(as(AdminRole.ADMIN).post("/admin/users/as-demoted/role", "role", "viewer"))).isEqualTo(200);

        onB.api(HttpMethod.PUT, "/admin/api/tenants/" + tenant + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("requests_per_minute", 100000)).exchange().expectStatus().isForbidden();
        assertThat(jdbc.sql("SELECT requests_per_minute FROM tenants WHERE id = :t").param("t", tenant).query(Integer.class).single())
                .isEqualTo(50);
        assertThat(status(onB.get("/admin/users"))).as("the users page is an admin's").isEqualTo(403);
        assertThat(status(onB.get("/admin/tenants"))).as("a viewer still reads").isEqualTo(200);
    }

    @Test
    void aDisabledPublisherCanNoLongerApproveOrPublish() {
        users.create("as-pub", PASSWORD, AdminRole.PUBLISHER, "test");
        long disclosure = tokenDraft();
        UiSession api = loginOnA("as-pub", PASSWORD).sameBrowserOn(b);
        UiSession ui = loginOnA("as-pub", PASSWORD).sameBrowserOn(b);
        ui.get("/admin/disclosures/" + disclosure);

        assertThat(status(as(AdminRole.ADMIN).post("/admin/users/as-pub/disable"))).isEqualTo(200);

        api.api(HttpMethod.POST, "/admin/api/disclosures/" + disclosure + "/approve").exchange().expectStatus().isUnauthorized();
        sentToLogin(ui.post("/admin/disclosures/" + disclosure + "/approve"));
        assertThat(jdbc.sql("SELECT count(*) FROM disclosure_reviews WHERE disclosure_id = :d").param("d", disclosure)
                .query(Long.class).single()).as("no review recorded").isZero();
        // the refused request deleted the session, and its CSRF token with it: the form post is refused before routing
        assertThat(status(ui.post("/admin/disclosures/" + disclosure + "/publish"))).isEqualTo(403);
        api.api(HttpMethod.POST, "/admin/api/disclosures/" + disclosure + "/publish").exchange().expectStatus().isForbidden();
        assertThat(jdbc.sql("SELECT status FROM disclosures WHERE id = :d").param("d", disclosure).query(String.class).single())
                .isEqualTo("DRAFT");

        // the same steps by an enabled publisher work on B
        UiSession publisher = as(AdminRole.PUBLISHER).sameBrowserOn(b);
        publisher.api(HttpMethod.POST, "/admin/api/disclosures/" + disclosure + "/approve").exchange().expectStatus().isOk();
    }

    /** A draft by the admin token on a fresh incident; returns its id. */
    private long tokenDraft() {
        long incident = incident();
        Map<?, ?> draft = admin().post().uri("/admin/api/incidents/" + incident + "/disclosure").exchange()
                .expectStatus().isCreated().expectBody(Map.class).returnResult().getResponseBody();
        long id = ((Number) draft.get("id")).longValue();
        // the template's placeholders filled in: a version with any left is not approved
        admin().put().uri("/admin/api/disclosures/" + id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("title", "Cross-tenant read", "body", "What happened.")).exchange().expectStatus().isOk();
        return id;
    }

    @Test
    void aResetPasswordEndsTheSessionsAndOnlyLetsTheUserChooseANewOne() {
        users.create("as-reset", PASSWORD, AdminRole.RESPONDER, "test");
        UiSession old = loginOnA("as-reset", PASSWORD).sameBrowserOn(b);
        assertThat(status(old.get("/admin/incidents"))).isEqualTo(200);

        UiSession admin = as(AdminRole.ADMIN);
        EntityExchangeResult<String> reset = admin.post("/admin/users/as-reset/reset-password");
        assertThat(status(reset)).isEqualTo(200);
        Matcher m = ONE_TIME.matcher(reset.getResponseBody());
        assertThat(m.find()).as("the one-time password shown once").isTrue();
        String oneTime = m.group(1);
        EntityExchangeResult<String> own = admin.post("/admin/users/as-admin/reset-password");
        assertThat(status(own)).as("not one's own: %s", own.getResponseBody()).isEqualTo(400);

        sentToLogin(old.get("/admin/incidents"));
        UiSession wrong = new UiSession(b);
        wrong.get("/admin/login");
        assertThat(UiSession.location(wrong.post("/admin/login", "username", "as-reset", "password", PASSWORD)))
                .as("the old password no longer logs in").isEqualTo("/admin/login?error");

        UiSession fresh = new UiSession(b).login("as-reset", oneTime);
        EntityExchangeResult<String> elsewhere = fresh.get("/admin/incidents");
        assertThat(status(elsewhere)).isEqualTo(302);
        assertThat(UiSession.location(elsewhere)).isEqualTo("/admin/password");
        fresh.api(HttpMethod.GET, "/admin/api/tenants").exchange().expectStatus().isForbidden();
        assertThat(fresh.get("/admin/password").getResponseBody()).contains("id=\"must-change\"");

        EntityExchangeResult<String> mismatch = fresh.post("/admin/password", "current", oneTime, "password", NEW_PASSWORD,
                "confirm", NEW_PASSWORD + "x");
        assertThat(status(mismatch)).isEqualTo(400);
        assertThat(mismatch.getResponseBody()).contains("the new password and its confirmation differ");
        EntityExchangeResult<String> wrongCurrent = fresh.post("/admin/password", "current", PASSWORD, "password", NEW_PASSWORD,
                "confirm", NEW_PASSWORD);
        assertThat(status(wrongCurrent)).isEqualTo(400);
        assertThat(wrongCurrent.getResponseBody()).contains("the current password is wrong");
        assertThat(status(fresh.post("/admin/password", "current", oneTime, "password", "short", "confirm", "short")))
                .isEqualTo(400);

        EntityExchangeResult<String> changed = fresh.post("/admin/password", "current", oneTime, "password", NEW_PASSWORD,
                "confirm", NEW_PASSWORD);
        assertThat(status(changed)).isEqualTo(303);
        assertThat(UiSession.location(changed)).isEqualTo("/admin/password?changed");
        assertThat(status(fresh.get("/admin/incidents"))).as("the session goes on with its role").isEqualTo(200);
        assertThat(status(fresh.sameBrowserOn(baseUrl()).get("/admin/incidents"))).as("on A too").isEqualTo(200);
        assertThat(users.findByName("as-reset").orElseThrow().mustChangePassword()).isFalse();
        loginOnA("as-reset", NEW_PASSWORD);
    }

    @Test
    void changingOnesOwnPasswordEndsOnesOtherSessionsOnEveryReplica() {
        users.create("as-self", PASSWORD, AdminRole.RESPONDER, "test");
        UiSession here = loginOnA("as-self", PASSWORD);
        UiSession elsewhere = new UiSession(b).login("as-self", PASSWORD);
        String before = here.cookie("SESSION");

        here.get("/admin/password");
        assertThat(status(here.post("/admin/password", "current", PASSWORD, "password", NEW_PASSWORD, "confirm", NEW_PASSWORD)))
                .isEqualTo(303);
        assertThat(here.cookie("SESSION")).as("a new session id").isNotEqualTo(before);

        sentToLogin(elsewhere.get("/admin/incidents"));
        assertThat(status(here.sameBrowserOn(b).get("/admin/incidents"))).isEqualTo(200);
        UiSession stale = new UiSession(baseUrl());
        stale.get("/admin/login");
        assertThat(UiSession.location(stale.post("/admin/login", "username", "as-self", "password", PASSWORD)))
                .isEqualTo("/admin/login?error");
        new UiSession(b).login("as-self", NEW_PASSWORD);
    }

    @Test
    void oneAdminCannotBeBothPeopleOfFourEyesWithAnAccountTheyMade() {
        UiSession admin = as(AdminRole.ADMIN);
        long incident = incident();
        long id = ((Number) admin.api(HttpMethod.POST, "/admin/api/incidents/" + incident + "/disclosure").exchange()
                .expectStatus().isCreated().expectBody(Map.class).returnResult().getResponseBody().get("id")).longValue();
        admin.api(HttpMethod.PUT, "/admin/api/disclosures/" + id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("title", "Cross-tenant read", "body", "What happened.")).exchange().expectStatus().isOk();
        admin.get("/admin/users");
        assertThat(status(admin.post("/admin/users", "username", "as-sock", "password", PASSWORD, "role", "responder")))
                .isEqualTo(200);

        UiSession sock = new UiSession(b).login("as-sock", PASSWORD);
        sock.api(HttpMethod.POST, "/admin/api/disclosures/" + id + "/approve").exchange().expectStatus().isForbidden()
                .expectBody().jsonPath("$.error.code").isEqualTo("four_eyes_reviewer_vouched_by_author")
                .jsonPath("$.error.message").value(m -> assertThat((String) m)
                        .contains("as-admin, an author of the text, created as-sock's account"));
        sock.get("/admin/disclosures/" + id);
        EntityExchangeResult<String> page = sock.post("/admin/disclosures/" + id + "/approve");
        assertThat(status(page)).isEqualTo(403);
        assertThat(page.getResponseBody()).contains("an author of the text, created as-sock");

        assertThat(status(admin.post("/admin/users/as-sock/disable"))).isEqualTo(200);
        admin.api(HttpMethod.POST, "/admin/api/disclosures/" + id + "/publish").exchange().expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.error.code").isEqualTo("four_eyes_review_required");

        // a review such an account made before the rule existed: not counted at publish, flagged on the audit page
        jdbc.sql("""
                INSERT INTO disclosure_reviews (disclosure_id, incident_id, version, reviewer, reviewed_at, content_sha256)
                SELECT id, incident_id, version, 'as-sock', now(), :h FROM disclosures WHERE id = :d""")
                .param("d", id).param("h", Canonical.sha256("Cross-tenant read" + '\u0000' + "What happened.")).update();
        admin.api(HttpMethod.GET, "/admin/api/disclosures/" + id).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.reviews[0].reviewer").isEqualTo("as-sock").jsonPath("$.reviews[0].current").isEqualTo(true);
        admin.api(HttpMethod.POST, "/admin/api/disclosures/" + id + "/publish").exchange().expectStatus().isEqualTo(409);
        String audit = admin.get("/admin/audit").getResponseBody();
        assertThat(audit).contains("id=\"four-eyes-flags\"").contains("as-admin, an author of the text, created as-sock&#39;s account");
    }
}
