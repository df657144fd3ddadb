package dev.pagewarden.core.engine;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class FairAdmissionTest extends RealModelTest {

    @Test
    void aSingleRequestIsAdmittedAheadOfAFloodingTenantsQueue() throws Exception {
        // a decode pool of 64 tokens holds one request of 50 at a time (each reserves all its tokens at admission):
        // admission order is first-token order
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        List<String> firstTokens = new CopyOnWriteArrayList<>();
        try (Engine e = EngineBehaviourTest.engine(EngineConfig.builder().poolTokens(64, 64).contextWindow(64)
                .decodeHeadroomPages(EngineConfig.FULL_RESERVATION).build())) {
            RequestHandle holder = e.submit(request("a"), (id, tok) -> {
                holding.countDown();
                try {
                    letGo.await();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
            List<RequestHandle> handles = new ArrayList<>(List.of(holder));
            for (int i = 0; i < 8; i++) {
                handles.add(e.submit(request("a"), firstToken(firstTokens, "a" + i)));
            }
            handles.add(e.submit(request("b"), firstToken(firstTokens, "b")));
            assertThat(e.queued()).isEqualTo(9);
            letGo.countDown();
            for (RequestHandle h : handles) {
                h.result().get(120, TimeUnit.SECONDS);
            }
        }
        assertThat(firstTokens).hasSize(9);
        // in arrival order b would be last; by service, b (served nothing) goes before a's flood
        assertThat(firstTokens.indexOf("b")).isLessThanOrEqualTo(1);
        assertThat(firstTokens.stream().filter(s -> s.startsWith("a")).toList())
                .containsExactly("a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7");
    }

    private static GenerationRequest request(String tenant) {
        return new GenerationRequest(tenant, EngineBehaviourTest.prompt(10), 40, SamplingParams.greedy());
    }

    private static TokenListener firstToken(List<String> order, String label) {
        boolean[] seen = {false};
        return (id, tok) -> {
            if (!seen[0]) {
                seen[0] = true;
                order.add(label);
            }
        };
    }
}
