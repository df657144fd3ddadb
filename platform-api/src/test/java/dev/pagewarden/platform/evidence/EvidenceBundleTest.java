package dev.pagewarden.platform.evidence;

import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.evidence.ChainForgery;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.platform.testing.PlatformTestBase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The 2026 incident re-created on a lab platform (as in AdminUiLabIncidentTest): the chains of the whole
 * database verify; the incident's evidence bundle verifies offline with the published key set and fails
 * with one byte flipped; a reader tenant's slice verifies too and holds that tenant's rows only; a
 * tenant the incident did not concern gets 404; {@code audit verify --trust} of the platform jar names a row
 * changed directly in PostgreSQL, and the whole database-only forgery - the row changed, its chain re-hashed, a key
 * of the forger's inserted into receipt_keys, the later checkpoints re-signed with it - which the in-app verification
 * names too, while the injected key is not published.
 */
@TestPropertySource(properties = {"pagewarden.lab.enabled=true",
        "pagewarden.lab.faults=skip-capacity-check,legacy-finished-check,detectors-off",
        "pagewarden.engine.context-window=320", "pagewarden.engine.prefill-pool-tokens=192",
        "pagewarden.engine.decode-pool-tokens=1024", "pagewarden.admin.lineage-sweep=0s"})
class EvidenceBundleTest extends PlatformTestBase {
    private static final Path HOME = tempHome();

    @Autowired
    IncidentService incidents;
    @Autowired
    EmbeddedPostgresServer pg;
    @Autowired
    JdbcClient jdbc;
    @Autowired
    CheckpointWriter checkpoints;
    @TempDir
    Path tmp;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    @Test
    @SuppressWarnings("unchecked")
    void labIncidentBundleVerifiesOfflineAndATenantSliceHoldsOnlyItsRows() throws Exception {
        Map<String, Object> out = admin().post().uri("/admin/api/lab/replay").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("scenario", "incident-2026-undetected")).exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        long id = ((List<Number>) out.get("incidents_filed_by_lineage_sweep")).getFirst().longValue();
        BlastRadius radius = incidents.blastRadius(incidents.get(id));
        assertThat(radius.responses()).isNotEmpty();

        // every chain of the database verifies, from the admin API
        Map<String, Object> verified = admin().get().uri("/admin/api/audit/verify").exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(verified.get("broken")).asList().isEmpty();
        assertThat(verified.get("ok")).isEqualTo(true);
        assertThat((Map<String, Number>) verified.get("checked")).containsKey("kv_lineage");
        assertThat(((Map<String, Number>) verified.get("checked")).get("kv_lineage").longValue()).isPositive();

        // the operator's bundle, verified offline against the published keys
        byte[] bundle = admin().get().uri("/admin/api/incidents/" + id + "/evidence").exchange().expectStatus().isOk()
                .expectHeader().contentType("application/zip").expectBody(byte[].class).returnResult().getResponseBody();
        byte[] jwks = client().get().uri("/.well-known/pagewarden-receipt-keys").exchange().expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody();
        Path keys = Files.write(tmp.resolve("keys.json"), jwks);
        Path file = Files.write(tmp.resolve("bundle.zip"), bundle);
        assertThat(verify(file, keys)).startsWith("0 ").doesNotContain("note:");
        Map<String, String> files = unzip(bundle);
        assertThat(files).containsKeys("manifest.json", "manifest.sig", "incident.json", "timeline.json", "lineage.json",
                "receipts.json", "safety_events.json", "disclosures.json", "chains.json", "checkpoints.json", "keys.json");
        Set<Long> lineageRequests = new TreeSet<>();
        for (Map<String, Object> row : (List<Map<String, Object>>) BundleFormat.JSON.readValue(files.get("lineage.json"), Map.class).get("rows")) {
            lineageRequests.add(Long.parseLong((String) ((Map<String, Object>) row.get("values")).get("request_id")));
        }
        for (BlastRadius.AffectedResponse r : radius.responses()) {
            assertThat(lineageRequests).contains(r.readerRequest()).containsAll(r.exposingRequests());
        }
        // the checkpoints the bundle holds are published
        Map<String, Object> published = client().get().uri("/.well-known/pagewarden-checkpoints").exchange().expectStatus().isOk()
                .expectHeader().cacheControl(org.springframework.http.CacheControl.maxAge(java.time.Duration.ofMinutes(1)).cachePublic())
                .expectBody(Map.class).returnResult().getResponseBody();
        List<Map<String, Object>> pinned = (List<Map<String, Object>>) published.get("checkpoints");
        assertThat(pinned).extracting(k -> (String) k.get("chain")).anyMatch(c -> c.startsWith("lineage:"));
        assertThat(pinned).allSatisfy(k -> assertThat(k).containsKeys("chain", "seq", "head", "at", "key_id", "signature"));

        // one byte flipped inside lineage.json's stored data: broken, named
        byte[] flipped = bundle.clone();
        int at = indexOf(flipped, "lineage.json".getBytes(StandardCharsets.US_ASCII)) + "lineage.json".length() + 20;
        flipped[at] ^= 0x01;
        String broken = verify(Files.write(tmp.resolve("flipped.zip"), flipped), keys);
        assertThat(broken).startsWith("1 ").contains("lineage.json");
        // not a bundle at all: unreadable
        assertThat(verify(Files.write(tmp.resolve("junk.zip"), new byte[]{1, 2, 3}), keys)).startsWith("2 ");

        // a reader tenant's slice: verifies, and holds only that tenant's lineage rows and receipts
        String tenant = radius.readerTenants().iterator().next();
        Set<String> others = new HashSet<>(radius.readerTenants());
        others.addAll(radius.exposedTenants());
        others.remove(tenant);
        assertThat(others).as("the lab incident involves more than one tenant").isNotEmpty();
        byte[] slice = as(issueKey(tenant)).get().uri("/v1/evidence/incidents/" + id).exchange().expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertThat(verify(Files.write(tmp.resolve("slice.zip"), slice), keys)).startsWith("0 ");
        Map<String, String> sliceFiles = unzip(slice);
        assertThat(sliceFiles).doesNotContainKeys("timeline.json", "safety_events.json");
        List<Map<String, Object>> rows = (List<Map<String, Object>>) BundleFormat.JSON.readValue(sliceFiles.get("lineage.json"), Map.class).get("rows");
        assertThat(rows).isNotEmpty().allSatisfy(r -> assertThat(((Map<String, Object>) r.get("values")).get("tenant_id")).isEqualTo(tenant));
        List<Map<String, Object>> receipts = (List<Map<String, Object>>) BundleFormat.JSON.readValue(sliceFiles.get("receipts.json"), Map.class).get("receipts");
        assertThat(receipts).isNotEmpty().allSatisfy(r -> assertThat(r.get("tenant")).isEqualTo(tenant));
        for (var f : sliceFiles.entrySet()) {
            for (String other : others) {
                assertThat(f.getValue()).as(f.getKey() + " names no other tenant").doesNotContain("\"" + other + "\"");
            }
        }
        String bystander = newTenant("bystander")[1];
        as(bystander).get().uri("/v1/evidence/incidents/" + id).exchange().expectStatus().isNotFound();

        // audit verify of the platform jar, on this database: intact, then one admin-audit row changed in PostgreSQL
        assertThat(auditVerify()).startsWith("0 ");
        long row = jdbc.sql("SELECT max(id) FROM admin_audit").query(Long.class).single();
        jdbc.sql("UPDATE admin_audit SET details = 'nothing happened' WHERE id = :id").param("id", row).update();
        String named = auditVerify();
        assertThat(named).startsWith("1 ").contains("\"table\" : \"admin_audit\"").contains("\"id\" : \"" + row + "\"");
        jdbc.sql("DELETE FROM chain_links WHERE table_name = 'admin_audit' AND row_id = :id").param("id", row).update();
        jdbc.sql("DELETE FROM admin_audit WHERE id = :id").param("id", row).update(); // leave the shared database verifiable
        assertThat(auditVerify()).startsWith("0 ");
        // without a pinned trust the command refuses to judge
        assertThat(command("audit", "verify", "--trust", tmp.resolve("none").toString())).startsWith("2 ");

        // the database-only forgery: an early admin-audit row's actor changed, the chain re-hashed from there, a key
        // of the forger's own in receipt_keys, every later checkpoint of that chain re-signed with it
        checkpoints.round();
        long early = jdbc.sql("SELECT min(row_id) FROM chain_links WHERE table_name = 'admin_audit'").query(Long.class).single();
        ChainForgery.Forged forged = ChainForgery.rewriteAuditRow(pg.dataSource(), early, "mallory", false);
        assertThat(forged.resigned()).isNotEmpty();
        String caught = auditVerify();
        assertThat(caught).startsWith("1 ").contains("\"table\" : \"receipt_keys\"").contains(forged.injectedKeyId());
        for (String k : forged.resigned()) {
            assertThat(caught).contains("\"id\" : \"" + k + "\"");
        }
        Map<String, Object> inApp = admin().get().uri("/admin/api/audit/verify").exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(inApp.get("ok")).isEqualTo(false);
        assertThat(BundleFormat.json(inApp.get("broken"))).contains(forged.injectedKeyId());
        assertThat(new String(client().get().uri("/.well-known/pagewarden-receipt-keys").exchange().expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody(), StandardCharsets.UTF_8))
                .as("a key that does not chain is not published").doesNotContain(forged.injectedKeyId());
    }

    private String verify(Path file, Path keys) {
        return command("evidence", "verify", file.toString(), "--trust", HOME.resolve("receipt-trust").toString(),
                "--keys", keys.toString());
    }

    private String auditVerify() {
        return command("audit", "verify", "--trust", HOME.resolve("receipt-trust").toString(),
                "--spring.datasource.url=" + pg.jdbcUrl(), "--spring.datasource.username=" + pg.user(),
                "--spring.datasource.password=" + pg.password());
    }

    /** "exit-status output", the command run in this JVM. */
    private static String command(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = EvidenceCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = status + " " + out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
        System.out.println(String.join(" ", args[0], args[1]) + " -> " + text);
        return text;
    }

    private static Map<String, String> unzip(byte[] zip) throws Exception {
        Map<String, String> files = new HashMap<>();
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                files.put(e.getName(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        return files;
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }

    private String issueKey(String tenantId) {
        Map<?, ?> key = admin().post().uri("/admin/api/tenants/" + tenantId + "/keys").exchange().expectStatus().isCreated()
                .expectBody(Map.class).returnResult().getResponseBody();
        return (String) key.get("key");
    }
}
