package dev.pagewarden.platform.completion;

import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.platform.error.ApiException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Every way the engine refuses or stops a request becomes one status and code on the API. */
class EngineErrorMappingTest {

    private static void expect(Throwable engine, int status, String code, boolean retryAfter) {
        ApiException api = InferenceService.toApi(engine, "cmpl-x", CompletionRequest.Kind.CHAT);
        assertThat(api.status().value()).isEqualTo(status);
        assertThat(api.error().code()).isEqualTo(code);
        assertThat(api.error().message()).isEqualTo(engine.getMessage());
        assertThat(api.retryAfter() != null).isEqualTo(retryAfter);
    }

    @Test
    void admissionRefusals() {
        expect(new RequestRejectedException("context_length_exceeded", "needs 600 of 512"), 400, "context_length_exceeded", false);
        expect(new RequestRejectedException("overloaded", "queue full"), 503, "overloaded", true);
        expect(new RequestRejectedException("audit_backpressure", "journal full"), 503, "audit_backpressure", true);
    }

    @Test
    void detectorStops() {
        expect(new RequestFailedException("isolation_violation", "owner tag mismatch"), 500, "isolation_violation", false);
        expect(new RequestFailedException("kv_transfer_failed", "checksum"), 500, "kv_transfer_failed", false);
        expect(new RequestFailedException("context_length_exceeded", "prompt too long for prefill"), 400,
                "context_length_exceeded", false);
    }

    @Test
    void engineNodes() {
        // a retry goes to a node that is live
        expect(new RequestFailedException("engine_node_lost", "decode node decode-a was lost"), 503, "engine_node_lost", true);
        // the nodes disagree on the model: nothing to retry until the operator fixes it
        expect(new RequestRejectedException("engine_misconfigured", "engine nodes disagree"), 503, "engine_misconfigured", false);
    }

    @Test
    void aRequestPreemptedTooOftenIsRetryable() {
        expect(new RequestFailedException("preempted_too_often", "lost its KV pages to other requests more than 8 "
                + "times; retry when the engine is less busy"), 503, "preempted_too_often", true);
    }

    @Test
    void anAbortNobodyAskedForIsAServerError() {
        ApiException api = InferenceService.toApi(new RequestAbortedException("aborted: shutting down"), "cmpl-x", CompletionRequest.Kind.CHAT);
        assertThat(api.status().value()).isEqualTo(500);
        assertThat(api.error().code()).isEqualTo("request_aborted");
        ApiException internal = InferenceService.toApi(new IllegalStateException("boom"), "cmpl-x", CompletionRequest.Kind.CHAT);
        assertThat(internal.error().code()).isEqualTo("internal_error");
        // the tenant gets the id to quote, not the exception's class or message
        assertThat(internal.error().message()).contains("cmpl-x").doesNotContain("IllegalStateException").doesNotContain("boom");
    }

    @Test
    void engineMessagesNameTheRequestByItsPublicId() {
        ApiException api = InferenceService.toApi(new RequestAbortedException("request 4294967298 aborted: shutting down"),
                "cmpl-AbC123", CompletionRequest.Kind.CHAT);
        assertThat(api.getMessage()).isEqualTo("request cmpl-AbC123 aborted: shutting down").doesNotContain("4294967298");
    }
}
