package dev.pagewarden.platform;

import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.platform.audit.RequestRecord;
import dev.pagewarden.platform.audit.RequestRecordRepository;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.testing.PlatformTest;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that goes away mid-stream: the request is held at its fourth token, the client cancels
 * after three, and the engine must abort it through its normal path - every page back to free,
 * none quarantined, the request recorded as aborted by a disconnect.
 */
class DisconnectTest extends PlatformTest {
    @Autowired
    EngineHost host;
    @Autowired
    RequestRecordRepository requests;
    @Autowired
    MeterRegistry registry;

    @Test
    void disconnectMidGenerationAbortsTheRequestAndFreesItsPages() throws Exception {
        String key = newTenant("flaky-client")[1];
        java.util.function.Supplier<PoolStats> decode = () -> host.served().orElseThrow().engine().decodePool();
        double disconnectsBefore = disconnects();
        gate.arm(3);
        List<String> received = new CopyOnWriteArrayList<>();
        long held;
        Disposable client = null;
        try {
            client = WebClient.create(baseUrl()).post().uri("/v1/completions")
                    .header("Authorization", "Bearer " + key).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 200,
                            "temperature", 0, "stream", true))
                    .retrieve().bodyToFlux(String.class).subscribe(received::add);
            // the request is held at its fourth token whatever the client does; the client hangs up only then,
            // after its three tokens (hanging up earlier could end the request before it reached the gate)
            held = gate.awaitHeld();
            awaitUntil(() -> received.size() == 3, "the client to receive three tokens");
            client.dispose();
            assertThat(decode.get().pagesByState().get("owned")).as("the held request still owns its pages").isPositive();
            awaitUntil(() -> disconnects() > disconnectsBefore, "the platform to notice the disconnect");
        } finally {
            if (client != null) {
                client.dispose();
            }
            gate.release();
        }
        assertThat(received).hasSize(3);
        RequestRecord record = awaitRecord(held);
        assertThat(record.status()).isEqualTo("ABORTED");
        assertThat(record.errorCode()).isEqualTo("client_disconnected");
        assertThat(record.generatedTokens()).isLessThan(200);
        awaitUntil(() -> decode.get().allFree(), "every decode page to be free again");
        assertThat(decode.get().pagesByState().get("quarantined")).isZero();
    }

    private double disconnects() {
        return registry.counter("pagewarden.client.disconnects").count();
    }

    private RequestRecord awaitRecord(long id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Optional<RequestRecord> r = requests.findById(id);
        while (r.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
            r = requests.findById(id);
        }
        return r.orElseThrow(() -> new AssertionError("request " + id + " was never recorded"));
    }

    static void awaitUntil(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(condition.getAsBoolean()).as("waited 60 s for " + what).isTrue();
    }
}
