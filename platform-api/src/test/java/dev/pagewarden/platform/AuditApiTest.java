package dev.pagewarden.platform;

import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.core.receipt.ReceiptVerifier;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.platform.config.PagewardenProperties;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.security.interfaces.EdECPublicKey;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A tenant audits its own requests - lineage and server-side receipt verification - and verifies
 * receipts offline against the published keys; another tenant's request id is a 404.
 */
class AuditApiTest extends PlatformTest {

    @Test
    void tenantSeesItsOwnLineageAndAnOkReceiptButNotAnotherTenantsRequest() throws Exception {
        String mine = newTenant("auditor")[1];
        String theirs = newTenant("stranger")[1];
        Map<?, ?> completion = as(mine).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 24, "temperature", 0))
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        String id = (String) completion.get("id");

        Map<?, ?> audit = awaitVerified(mine, id);
        assertThat(audit.get("status")).isEqualTo("FINISHED");
        assertThat(audit.get("receipt")).isEqualTo(completion.get("pagewarden_receipt"));
        Map<?, ?> lineage = (Map<?, ?>) audit.get("lineage");
        assertThat(lineage.get("isolated")).isEqualTo(true);
        assertThat((List<?>) lineage.get("reads")).isNotEmpty();

        as(theirs).get().uri("/v1/audit/requests/" + id).exchange().expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.code").isEqualTo("request_not_found");
        as(mine).get().uri("/v1/audit/requests/cmpl-424242").exchange().expectStatus().isNotFound();
        client().get().uri("/v1/audit/requests/" + id).exchange().expectStatus().isUnauthorized();

        // offline: the tenant checks the signature with the published public keys alone
        Receipt receipt = Receipt.fromCompact((String) completion.get("pagewarden_receipt"));
        assertThat(ReceiptVerifier.verifySignature(receipt, ReceiptKeys.parsePublished(publishedKeys()))).isTrue();
    }

    /** The served key set as kid -> spki (what a tenant's verifier reads), after checking each JWK's {@code x}. */
    private Map<String, String> publishedKeys() throws Exception {
        Map<?, ?> published = client().get().uri("/.well-known/pagewarden-receipt-keys").exchange()
                .expectStatus().isOk()
                .expectHeader().cacheControl(CacheControl.maxAge(Duration.ofMinutes(1)).cachePublic())
                .expectBody(Map.class).returnResult().getResponseBody();
        Map<String, String> out = new LinkedHashMap<>();
        for (Object o : (List<?>) published.get("keys")) {
            Map<?, ?> jwk = (Map<?, ?>) o;
            assertThat(List.of(jwk.get("kty"), jwk.get("crv"), jwk.get("alg"))).containsExactly("OKP", "Ed25519", "EdDSA");
            String kid = (String) jwk.get("kid");
            out.put(kid, (String) jwk.get("spki"));
            // RFC 8037: x is the key's encoding - y little-endian, the top bit x's parity - here from the JDK's point
            EdECPublicKey key = (EdECPublicKey) ReceiptKeys.parsePublished(Map.of(kid, (String) jwk.get("spki"))).get(kid);
            byte[] x = new byte[32];
            byte[] y = key.getPoint().getY().toByteArray();
            for (int i = 0; i < Math.min(32, y.length); i++) {
                x[i] = y[y.length - 1 - i];
            }
            if (key.getPoint().isXOdd()) {
                x[31] |= (byte) 0x80;
            }
            assertThat(Base64.getUrlDecoder().decode((String) jwk.get("x"))).as("x of %s", kid).isEqualTo(x);
            nodes.put(kid, (String) jwk.get("node"));
        }
        assertThat(published.get("current")).isEqualTo(ownKeys.currentKeyId());
        return out;
    }

    private final Map<String, String> nodes = new LinkedHashMap<>();
    @Autowired
    DataSource dataSource;
    @Autowired
    ReceiptAudit receiptAudit;
    @Autowired
    ReceiptKeys ownKeys;
    @Autowired
    PagewardenProperties properties;

    /**
     * Another replica on the same database: its key, registered there, is neither served nor trusted here until its root
     * is pinned in the trust file (the database alone vouches for nothing); then it is served and its receipts verify
     * here. A key nobody pinned or endorsed is named as not chaining; a stored receipt moved to another request's row
     * or another tenant's is refused.
     */
    @Test
    void anotherReplicasKeyIsTrustedOnceItsRootIsPinnedAndReceiptsAreBoundToTheirRow(@TempDir Path otherHome) throws Exception {
        ReceiptKeyStore other = ReceiptKeyStore.open(otherHome.resolve("keys"), "pw");
        new ReceiptKeyRegistry(dataSource, Duration.ofSeconds(5), Duration.ZERO).registerAll(other.keys(), "replica-b");
        Receipt fromB = new ReceiptIssuer(MODEL, other.keys(), new ServingIdentity("replica-b", "r-0123456789abcdef"))
                .issue(77, "acme", List.of(), new int[] {1, 2, 3});
        assertThat(publishedKeys()).doesNotContainKey(other.keys().currentKeyId());
        ReceiptAudit.Verdict unpinned = receiptAudit.verify(fromB);
        assertThat(unpinned.status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
        assertThat(unpinned.detail()).contains("does not chain to the pinned trust");

        String kid = other.keys().currentKeyId();
        ReceiptTrust.append(properties.home().resolve("receipt-trust"),
                List.of(new ReceiptTrust.Root(kid, other.keys().publicKeys().get(kid), false)));
        Map<String, String> served = publishedKeys();
        assertThat(served).containsKeys(ownKeys.currentKeyId(), kid);
        assertThat(nodes).containsEntry(kid, "replica-b").containsEntry(ownKeys.currentKeyId(), properties.engine().node());
        assertThat(ReceiptVerifier.verifySignature(fromB, ownKeys.publicKeys())).as("not one of this replica's keys").isFalse();
        assertThat(receiptAudit.verify(fromB).status()).isEqualTo(ReceiptAudit.Status.OK);

        Receipt unknown = new ReceiptIssuer(MODEL, ReceiptKeys.generate("pw"), new ServingIdentity("replica-c", "r-0123456789abcdef"))
                .issue(78, "acme", List.of(), new int[] {1});
        ReceiptAudit.Verdict v = receiptAudit.verify(unknown);
        assertThat(v.status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
        assertThat(v.detail()).startsWith("receipt key " + unknown.keyId() + " does not chain to the pinned trust");

        // bound to the row it is stored in
        assertThat(receiptAudit.verify(fromB, new ReceiptAudit.Row(77, "acme", MODEL)).status()).isEqualTo(ReceiptAudit.Status.OK);
        assertThat(receiptAudit.verify(fromB, new ReceiptAudit.Row(79, "acme", MODEL)).status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
        assertThat(receiptAudit.verify(fromB, new ReceiptAudit.Row(77, "globex", MODEL)).status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
    }

    /**
     * A request whose prompt and generation span several KV pages: the lineage view lists every page
     * epoch the receipt claims, each with the slots read there by the end - expected from the token
     * counts and the page size alone - written by the request itself, and the verification counts agree.
     */
    @Test
    void multiPageRequestListsEveryPageEpochWithItsFinalSlotRange() throws Exception {
        String[] tenant = newTenant("pages");
        Map<?, ?> completion = as(tenant[1]).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time there was a little girl named Lily",
                        "max_tokens", 70, "temperature", 0))
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        String id = (String) completion.get("id");
        Map<?, ?> usage = (Map<?, ?>) completion.get("usage");
        int promptTokens = ((Number) usage.get("prompt_tokens")).intValue();
        int completionTokens = ((Number) usage.get("completion_tokens")).intValue();
        String finish = (String) ((Map<?, ?>) ((List<?>) completion.get("choices")).getFirst()).get("finish_reason");
        int pageTokens = Integer.parseInt(env.getProperty("pagewarden.engine.page-tokens", "16"));
        // each decode step feeds the last token and attends to every position up to its own; the last
        // generated token is never fed back, unless the step that sampled an end-of-text token ended it
        assertThat(finish).isIn("length", "stop");
        int positions = promptTokens + completionTokens - 1 + (finish.equals("stop") ? 1 : 0);
        List<Integer> expected = new ArrayList<>();
        for (int left = positions; left > 0; left -= pageTokens) {
            expected.add(Math.min(pageTokens, left));
        }
        assertThat(expected).as("the request spans several pages").hasSizeGreaterThanOrEqualTo(3);

        Receipt receipt = Receipt.fromCompact((String) completion.get("pagewarden_receipt"));
        assertThat(receipt.body().version()).isEqualTo(3);
        assertThat(receipt.body().nodeId()).isNotBlank();
        assertThat(receipt.body().replicaId()).isNotBlank();
        assertThat(receipt.body().reads()).extracting(PageEpochRead::slots).isEqualTo(expected);

        Map<?, ?> audit = awaitVerified(tenant[1], id);
        long requestId = ((Number) audit.get("request_id")).longValue();
        Map<?, ?> verification = (Map<?, ?>) audit.get("receipt_verification");
        assertThat(verification.get("detail")).isEqualTo(expected.size() + " page epochs read, " + positions
                + " slots, every slot written by request " + requestId);
        Map<?, ?> lineage = (Map<?, ?>) audit.get("lineage");
        assertThat(lineage.get("isolated")).isEqualTo(true);
        assertThat(lineage.get("page_epochs")).isEqualTo(expected.size());
        assertThat(lineage.get("slots")).isEqualTo(positions);
        List<Map<?, ?>> reads = ((List<?>) lineage.get("reads")).stream().<Map<?, ?>>map(r -> (Map<?, ?>) r).toList();
        assertThat(reads).extracting(r -> ((Number) r.get("slot_to")).intValue()).isEqualTo(expected);
        assertThat(reads).extracting(r -> ((Number) r.get("lineage_event_id")).longValue())
                .isEqualTo(receipt.body().reads().stream().map(PageEpochRead::lineageEventId).toList());
        assertThat(reads).extracting(r -> List.of(r.get("worker"), ((Number) r.get("page")).intValue(),
                        ((Number) r.get("epoch")).longValue()))
                .isEqualTo(receipt.body().reads().stream().map(p -> List.of(p.worker(), p.page(), p.epoch())).toList());
        // the page epochs are this replica's: the node its lineage rows and its receipt name
        assertThat(reads).extracting(r -> String.valueOf(r.get("node"))).containsOnly(receipt.body().nodeId());
        for (Map<?, ?> read : reads) {
            assertThat(read.get("slot_from")).isEqualTo(0);
            List<Map<?, ?>> writers = ((List<?>) read.get("writers")).stream().<Map<?, ?>>map(w -> (Map<?, ?>) w).toList();
            int next = 0; // the writer ranges cover the read range, each slot once
            for (Map<?, ?> w : writers) {
                assertThat(w.get("slot_from")).isEqualTo(next);
                next = ((Number) w.get("slot_to")).intValue();
                assertThat(((Number) w.get("writer_request")).longValue()).isEqualTo(requestId);
                assertThat(w.get("writer_tenant")).isEqualTo(tenant[0]);
                assertThat(w.get("kind")).isIn("TRANSFER_IN", "WRITE");
            }
            assertThat(next).isEqualTo(read.get("slot_to"));
        }
    }

    /** The receipt is "pending" until the request's lineage events have been shipped; then "ok". */
    private Map<?, ?> awaitVerified(String key, String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Map<?, ?> audit = as(key).get().uri("/v1/audit/requests/" + id).exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            String status = (String) ((Map<?, ?>) audit.get("receipt_verification")).get("status");
            if (!status.equals("pending") || System.nanoTime() > deadline) {
                assertThat(status).isEqualTo("ok");
                return audit;
            }
            Thread.sleep(50);
        }
    }
}
