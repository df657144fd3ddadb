package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nodes that go away: a prefill node closed while its transfers run, a decode node closed while it decodes
 * (and back on the same port), and a node whose certificate another CA issued.
 */
class ClusterNodeFailureTest extends RealModelTest {
    @TempDir
    Path dir;

    private static GenerationRequest request(int promptLength, int seed, int maxNew) {
        return new GenerationRequest("tenant-" + seed % 3, IsolationFixtures.prompt(promptLength, seed), maxNew,
                SamplingParams.greedy());
    }

    @Test
    void aPrefillNodeClosedMidTransferFailsItsRequestsWithTheTransferCodeAndEveryPageComesBack() throws Exception {
        EngineConfig config = ClusterFixture.config();
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            requests.add(request(200 + i, i, 8));
        }
        List<int[]> reference = new ArrayList<>();
        try (Engine engine = Engine.builder(model, config).build()) {
            for (GenerationRequest r : requests) {
                reference.add(engine.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens());
            }
        }
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        EngineConfig roomy = config.toBuilder().poolTokens(8192, 8192).build(); // the client refuses none of them
        PrefillNode prefill = pki.prefill(model, roomy, "prefill-a", 0);
        try (DecodeNode decode = pki.decode(model, roomy, "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            List<RequestHandle> handles = new ArrayList<>();
            for (GenerationRequest r : requests) {
                handles.add(cluster.submit(r, TokenListener.NONE));
            }
            // once pages have started to land on the decode node, the prefill node goes
            assertThat(IsolationFixtures.eventually(30_000, () -> decode.pool().peakUsedPages() > 0)).isTrue();
            prefill.close();

            int failed = 0;
            for (int i = 0; i < handles.size(); i++) {
                try {
                    int[] tokens = handles.get(i).result().get(30, TimeUnit.SECONDS).outputTokens();
                    assertThat(tokens).as("request %d", i).isEqualTo(reference.get(i)); // never another request's text
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).as("request %d", i).isInstanceOfSatisfying(RequestFailedException.class,
                            f -> assertThat(f.code()).isEqualTo("kv_transfer_failed"));
                    failed++;
                }
            }
            assertThat(failed).isPositive();
            // pages that a late write could have reached are scrubbed before they are free again
            assertThat(IsolationFixtures.eventually(15_000, () -> decode.pool().allFree())).as("%s", decode.pool()).isTrue();
            assertThat(decode.inFlight()).isZero();
        } finally {
            prefill.close();
        }
    }

    @Test
    void aDecodeNodeClosedFailsItsRequestsPromptlyLeavesRotationAndComesBackOnItsPort() throws Exception {
        EngineConfig config = ClusterFixture.config();
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        DecodeNode first = pki.decode(model, config, "decode-a", 0);
        int port = first.port();
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode other = pki.decode(model, config.toBuilder().poolTokens(0, 1024).build(), "decode-b", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, port), ClusterFixture.at(NodeRole.DECODE, other.port())))) {
            assertThat(IsolationFixtures.eventually(30_000, () -> cluster.liveNodes().size() == 3)).isTrue();

            // long generations; the larger node (decode-a) takes the first ones
            List<RequestHandle> handles = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                handles.add(cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(8, i), 480,
                        new SamplingParams(0f, 1f, 0, true)), TokenListener.NONE));
            }
            assertThat(IsolationFixtures.eventually(30_000, () -> first.inFlight() > 0)).isTrue();
            // when each failed request learnt it: the requests on decode-b go on generating and are not timed
            java.util.concurrent.atomic.AtomicLong lastFailure = new java.util.concurrent.atomic.AtomicLong();
            for (RequestHandle h : handles) {
                h.result().whenComplete((r, e) -> {
                    if (e != null) {
                        lastFailure.accumulateAndGet(System.nanoTime(), Math::max);
                    }
                });
            }
            long closedAt = System.nanoTime();
            first.close();

            int lost = 0;
            for (RequestHandle h : handles) {
                try {
                    h.result().get(120, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOfSatisfying(RequestFailedException.class,
                            f -> assertThat(f.code()).isEqualTo(ClusterEngine.NODE_LOST));
                    lost++;
                }
            }
            assertThat(lost).isPositive();
            assertThat(Duration.ofNanos(lastFailure.get() - closedAt)).isLessThan(Duration.ofSeconds(10));

            // out of rotation: everything goes to decode-b now
            assertThat(IsolationFixtures.eventually(10_000, () -> cluster.liveNodes().size() == 2)).isTrue();
            int beforePeak = other.pool().peakUsedPages();
            cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(8, 9), 16, SamplingParams.greedy()),
                    TokenListener.NONE).result().get(30, TimeUnit.SECONDS);
            assertThat(other.pool().peakUsedPages()).isGreaterThanOrEqualTo(Math.max(beforePeak, 2));

            // back on the same port: in rotation again, and it takes work
            try (DecodeNode again = pki.decode(model, config, "decode-a", port)) {
                assertThat(IsolationFixtures.eventually(15_000, () -> cluster.liveNodes().size() == 3)).isTrue();
                cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(8, 10), 16, SamplingParams.greedy()),
                        TokenListener.NONE).result().get(30, TimeUnit.SECONDS);
                assertThat(again.pool().peakUsedPages()).isPositive(); // the larger pool: the most free pages
            }
        } finally {
            first.close();
        }
    }

    @Test
    void aNodeWithACertificateFromAnotherCaIsNeverUsed() throws Exception {
        EngineConfig config = ClusterFixture.config();
        ClusterFixture pki = new ClusterFixture(dir.resolve("ours"), "cluster-ca");
        ClusterFixture stranger = new ClusterFixture(dir.resolve("theirs"), "other-ca");
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, config, "decode-a", 0);
             // larger pool: it would get every request, were it used
             DecodeNode foreign = stranger.decode(model, config.toBuilder().poolTokens(0, 8192).build(), "decode-x", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port()), ClusterFixture.at(NodeRole.DECODE, foreign.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            for (int i = 0; i < 4; i++) {
                cluster.submit(request(20, i, 16), TokenListener.NONE).result().get(30, TimeUnit.SECONDS);
            }
            assertThat(cluster.liveNodes()).hasSize(2).noneMatch(n -> n.contains("decode-x"));
            assertThat(foreign.pool().peakUsedPages()).isZero();
            assertThat(decode.pool().peakUsedPages()).isPositive();
        }
    }
}
