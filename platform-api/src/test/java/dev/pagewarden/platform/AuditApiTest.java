package dev.pagewarden.platform;

import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ReceiptVerifier;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;

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
        Map<?, ?> published = client().get().uri("/.well-known/pagewarden-receipt-keys").exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        @SuppressWarnings("unchecked")
        Map<String, String> keys = (Map<String, String>) published.get("keys");
        Receipt receipt = Receipt.fromCompact((String) completion.get("pagewarden_receipt"));
        assertThat(ReceiptVerifier.verifySignature(receipt, ReceiptKeys.parsePublished(keys))).isTrue();
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
