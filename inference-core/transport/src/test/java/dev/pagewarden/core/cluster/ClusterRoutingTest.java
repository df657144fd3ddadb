package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
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
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two decode nodes of different sizes behind one client: a request goes to the node with more free pages, a
 * burst spreads once the larger one has no more room than the smaller, and a request no node can hold is
 * refused before any page is reserved anywhere.
 */
class ClusterRoutingTest extends RealModelTest {
    @TempDir
    Path dir;

    @Test
    void requestsGoWhereThePagesAreAndOneThatFitsNowhereTouchesNoPool() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        EngineConfig big = ClusterFixture.config().toBuilder().poolTokens(0, 4096).build();
        EngineConfig small = ClusterFixture.config().toBuilder().poolTokens(0, 1024).build();
        EngineConfig prefillConfig = ClusterFixture.config().toBuilder().poolTokens(4096, 0).build();
        try (PrefillNode prefill = pki.prefill(model, prefillConfig, "prefill-a", 0);
             DecodeNode large = pki.decode(model, big, "decode-large", 0);
             DecodeNode little = pki.decode(model, small, "decode-small", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, large.port()), ClusterFixture.at(NodeRole.DECODE, little.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            assertThat(IsolationFixtures.eventually(10_000, () -> cluster.liveNodes().size() == 3)).isTrue();

            // one request: the node with more free pages takes it
            GenerationRequest one = new GenerationRequest("t", IsolationFixtures.prompt(40, 1), 200,
                    new SamplingParams(0f, 1f, 0, true));
            cluster.submit(one, TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
            assertThat(large.pool().peakUsedPages()).isEqualTo(15); // (40 + 200) tokens in 16-token pages
            assertThat(little.pool().peakUsedPages()).isZero();

            // a burst larger than the large node's pool (16 such requests) but within both (20): both take some
            List<RequestHandle> burst = new ArrayList<>();
            for (int i = 0; i < 18; i++) {
                burst.add(cluster.submit(new GenerationRequest("t" + i % 3, IsolationFixtures.prompt(56, i), 200,
                        new SamplingParams(0f, 1f, 0, true)), TokenListener.NONE));
            }
            for (RequestHandle h : burst) {
                assertThat(h.result().get(60, TimeUnit.SECONDS).outputTokens()).hasSize(200);
            }
            assertThat(little.pool().peakUsedPages()).isPositive();
            assertThat(large.pool().peakUsedPages()).isGreaterThan(little.pool().peakUsedPages());
            assertThat(IsolationFixtures.eventually(10_000, () -> large.pool().allFree() && little.pool().allFree()
                    && prefill.pool().allFree())).isTrue();

            // longer than any node's window: refused here, and no pool anywhere moves
            List<PoolStats> before = List.of(prefill.pool(), large.pool(), little.pool());
            RequestHandle tooLong = cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(300, 2), 300,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertThatThrownBy(() -> tooLong.result().get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(
                    RequestRejectedException.class).hasMessageContaining("maximum context length is 512 tokens");
            assertThat(((RequestRejectedException) catchCause(tooLong)).code()).isEqualTo("context_length_exceeded");
            assertThat(List.of(prefill.pool(), large.pool(), little.pool())).isEqualTo(before);
            assertThat(large.inFlight() + little.inFlight()).isZero();
        }
    }

    @Test
    void nodesThatDisagreeOnTheKvLayoutGetNoRequest() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, ClusterFixture.config(), "prefill-a", 0);
             DecodeNode decode = pki.decode(model, ClusterFixture.config().toBuilder().pageTokens(8).build(), "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            RequestHandle h = cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(8, 1), 8,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertThatThrownBy(() -> h.result().get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(RequestRejectedException.class)
                    .hasMessageContaining("engine nodes disagree").hasMessageContaining("prefill-a")
                    .hasMessageContaining("decode-a");
            assertThat(((RequestRejectedException) catchCause(h)).code()).isEqualTo("engine_misconfigured");
            assertThat(decode.pool().peakUsedPages()).isZero();
            assertThat(prefill.pool().peakUsedPages()).isZero();
        }
    }

    private static Throwable catchCause(RequestHandle h) {
        try {
            h.result().get(1, TimeUnit.SECONDS);
            return null;
        } catch (Exception e) {
            return e.getCause();
        }
    }
}
