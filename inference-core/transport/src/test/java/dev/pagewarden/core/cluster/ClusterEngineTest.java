package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One prefill node and one decode node on loopback, reached through {@link ClusterEngine}, decode exactly what
 * the engine in one process decodes: the same greedy tokens, the same seeded samples, streamed in order, and
 * every page of both pools free at the end.
 */
class ClusterEngineTest extends RealModelTest {
    @TempDir
    Path dir;

    static List<GenerationRequest> batch(java.util.function.IntFunction<SamplingParams> sampling) {
        List<GenerationRequest> requests = new ArrayList<>();
        int[] lengths = {1, 5, 16, 17, 40, 63, 3, 31};
        for (int i = 0; i < lengths.length; i++) {
            requests.add(new GenerationRequest("tenant-" + i % 3, IsolationFixtures.prompt(lengths[i], i), 24,
                    sampling.apply(i)));
        }
        return requests;
    }

    /** The tokens of every request, each also checked against what its listener streamed. */
    static List<int[]> run(InferenceEngine engine, List<GenerationRequest> requests) throws Exception {
        List<RequestHandle> handles = new ArrayList<>();
        List<List<Integer>> streamed = new ArrayList<>();
        for (GenerationRequest r : requests) {
            List<Integer> got = new CopyOnWriteArrayList<>();
            streamed.add(got);
            handles.add(engine.submit(r, (id, token) -> got.add(token)));
        }
        List<int[]> out = new ArrayList<>();
        for (int i = 0; i < handles.size(); i++) {
            int[] tokens = handles.get(i).result().get(120, TimeUnit.SECONDS).outputTokens();
            assertThat(streamed.get(i)).containsExactly(java.util.Arrays.stream(tokens).boxed().toArray(Integer[]::new));
            out.add(tokens);
        }
        return out;
    }

    @Test
    void greedyAndSeededOutputsAcrossNodesEqualTheInProcessEngines() throws Exception {
        EngineConfig config = ClusterFixture.config();
        List<GenerationRequest> greedy = batch(i -> SamplingParams.greedy());
        List<GenerationRequest> seeded = batch(i -> new SamplingParams(0.9f, 0.95f, 1000 + i));
        List<int[]> localGreedy;
        List<int[]> localSeeded;
        try (Engine engine = Engine.builder(model, config).build()) {
            localGreedy = run(engine, greedy);
            localSeeded = run(engine, seeded);
        }

        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, config, "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            assertThat(cluster.contextWindow()).isEqualTo(decode.contextWindow());
            assertThat(cluster.modelId()).isEqualTo(decode.modelId());

            List<int[]> remoteGreedy = run(cluster, greedy);
            List<int[]> remoteSeeded = run(cluster, seeded);

            for (int i = 0; i < greedy.size(); i++) {
                assertThat(remoteGreedy.get(i)).as("greedy request %d", i).isEqualTo(localGreedy.get(i)).isNotEmpty();
                assertThat(remoteSeeded.get(i)).as("seeded request %d", i).isEqualTo(localSeeded.get(i)).isNotEmpty();
            }
            // prefill pages come back on the transfer's outcome, just after the result
            assertThat(IsolationFixtures.eventually(10_000, () -> prefill.pool().allFree())).isTrue();
            assertThat(IsolationFixtures.eventually(10_000, () -> decode.pool().allFree())).isTrue();
            // and the client sees it too, from the nodes' status
            assertThat(IsolationFixtures.eventually(10_000, () -> cluster.prefillPool().allFree()
                    && cluster.decodePool().allFree())).isTrue();
            assertThat(cluster.pools()).extracting(p -> p.name()).containsExactly("prefill-a", "decode-a");

            // every sampling control travels to the nodes (ClusterSamplingTest); a constraint with no text to send
            // cannot, and is refused by name
            int[] prompt = greedy.getFirst().promptTokens();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.validate(new GenerationRequest("t", prompt,
                            4, SamplingParams.greedy().withConstraint(() -> null))))
                    .isInstanceOfSatisfying(dev.pagewarden.core.request.InvalidRequestException.class,
                            e -> assertThat(e.param()).isEqualTo("response_format"));

            // every page that left prefill-a landed in decode-a, in the nodes' own lineage
            long out = pki.lineage.stream().filter(e -> e.kind() == LineageEvent.Kind.TRANSFER_OUT
                    && e.worker().equals("prefill-a")).count();
            long in = pki.lineage.stream().filter(e -> e.kind() == LineageEvent.Kind.TRANSFER_IN
                    && e.worker().equals("decode-a") && "prefill-a".equals(e.peerWorker())).count();
            long pages = 0;
            for (GenerationRequest r : greedy) {
                pages += 2L * ((r.promptLength() + 15) / 16); // both batches: 16-token pages of each prompt
            }
            assertThat(out).isEqualTo(pages);
            assertThat(in).isEqualTo(pages);
        }
    }

    @Test
    void anAbortEndsTheRequestOnTheNodesAndReturnsItsPages() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        EngineConfig config = ClusterFixture.config();
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, config, "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            java.util.concurrent.CountDownLatch firstToken = new java.util.concurrent.CountDownLatch(1);
            RequestHandle h = cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(20, 3), 480,
                    new SamplingParams(0f, 1f, 0, true)), (id, token) -> firstToken.countDown());
            assertThat(firstToken.await(30, TimeUnit.SECONDS)).isTrue();
            h.abort("the client went away");

            assertThatThrownBy(() -> h.result().get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(RequestAbortedException.class)
                    .hasMessageContaining("the client went away");
            assertThat(h.state()).isInstanceOf(RequestState.Aborted.class);
            assertThat(IsolationFixtures.eventually(10_000, () -> decode.pool().allFree() && prefill.pool().allFree()
                    && decode.inFlight() == 0)).isTrue();
        }
    }
}
