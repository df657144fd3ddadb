package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prefix cache on prefill nodes: a second prompt of the same tenant with the same leading pages goes to the
 * prefill node that holds them (though the other one has more free pages) and reports them as cached tokens;
 * another tenant's same prompt reuses nothing; every output equals the request's alone on a fresh engine, and
 * the nodes' lineage records the CACHE and REUSE of the pages.
 */
class ClusterPrefixCacheTest extends RealModelTest {
    @TempDir
    Path dir;

    private static GenerationRequest request(String tenant, int[] prompt) {
        return new GenerationRequest(tenant, prompt, 12, SamplingParams.greedy(), PrefixCaching.on(null, "completion"));
    }

    private static GenerationResult run(dev.pagewarden.core.engine.InferenceEngine engine, GenerationRequest r)
            throws Exception {
        return engine.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
    }

    @Test
    void aTenantsRepeatedPrefixLandsOnTheNodeThatCachedItAndCountsAsCachedTokens() throws Exception {
        int[] prompt = IsolationFixtures.prompt(40, 7); // two full pages of 16 tokens before the last token
        int[] longer = java.util.Arrays.copyOf(prompt, 45);
        System.arraycopy(IsolationFixtures.prompt(5, 9), 0, longer, 40, 5);
        GenerationRequest first = request("tenant-a", prompt);
        GenerationRequest again = request("tenant-a", longer);
        GenerationRequest other = request("tenant-b", prompt);
        EngineConfig config = ClusterFixture.config();
        Map<GenerationRequest, int[]> alone = new java.util.HashMap<>();
        for (GenerationRequest r : List.of(first, again, other)) {
            try (Engine engine = Engine.builder(model, config).build()) {
                alone.put(r, run(engine, r).outputTokens());
            }
        }

        EngineConfig cached = config.toBuilder().prefixCache(true).build();
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode a = pki.prefill(model, cached, "prefill-a", 0);
             PrefillNode b = pki.prefill(model, cached, "prefill-b", 0);
             DecodeNode decode = pki.decode(model, cached, "decode-a", 0);
             ClusterEngine cluster = ClusterEngine.connect(List.of(ClusterFixture.at(NodeRole.PREFILL, a.port()),
                     ClusterFixture.at(NodeRole.PREFILL, b.port()), ClusterFixture.at(NodeRole.DECODE, decode.port())),
                     pki.tls("platform"), ClusterOptions.defaults("platform").withHeartbeat(ClusterFixture.HEARTBEAT),
                     dev.pagewarden.core.lineage.LineageSink.NONE, ReceiptKeys.generate("test"))) {
            assertThat(IsolationFixtures.eventually(30_000, () -> cluster.nodes().size() == 3)).isTrue();

            GenerationResult r1 = run(cluster, first);
            assertThat(r1.outputTokens()).isEqualTo(alone.get(first));
            assertThat(r1.cachedTokens()).isZero();
            assertThat(r1.receipt().body().version()).isEqualTo(3);
            String holder = prefillNodeOf(pki, r1.requestId());
            PrefillNode holding = holder.equals("prefill-a") ? a : b;
            // the pages stay cached once their transfer is acknowledged, and the client hears of it in STATUS,
            // which makes the holder the node with fewer free pages: the plain choice would be the other one
            assertThat(IsolationFixtures.eventually(10_000, () -> holding.pool().cachedPages() == 2)).isTrue();
            assertThat(IsolationFixtures.eventually(10_000, () -> cluster.nodes().stream().anyMatch(
                    n -> n.node().equals(holder) && n.pool().cachedPages() == 2))).isTrue();

            GenerationResult r2 = run(cluster, again);
            assertThat(prefillNodeOf(pki, r2.requestId())).isEqualTo(holder);
            assertThat(r2.cachedTokens()).isEqualTo(32);
            assertThat(r2.outputTokens()).isEqualTo(alone.get(again));
            // the receipt lists the reused pages: the prefill node's pool, the first request as their writer
            assertThat(r2.receipt().body().version()).isEqualTo(4);
            assertThat(r2.receipt().body().reused()).hasSize(2).allSatisfy(p -> {
                assertThat(p.worker()).isEqualTo(holder);
                assertThat(p.writerRequest()).isEqualTo(r1.requestId());
            });
            assertThat(pki.lineage.stream().filter(e -> e.kind() == LineageEvent.Kind.REUSE
                    && e.requestId() == r2.requestId() && e.worker().equals(holder)).count()).isEqualTo(2);

            GenerationResult r3 = run(cluster, other);
            assertThat(r3.cachedTokens()).isZero();
            assertThat(r3.outputTokens()).isEqualTo(alone.get(other));
            assertThat(pki.lineage.stream().filter(e -> e.kind() == LineageEvent.Kind.REUSE
                    && e.requestId() == r3.requestId()).count()).isZero();

            assertThat(pki.lineage.stream().filter(e -> e.kind() == LineageEvent.Kind.CACHE
                    && e.requestId() == r1.requestId() && e.worker().equals(holder)).count()).isEqualTo(2);
            // no page stays owned anywhere: only cached prefixes remain on the prefill nodes
            assertThat(IsolationFixtures.eventually(10_000, () -> a.pool().ownedPages() == 0
                    && b.pool().ownedPages() == 0 && decode.pool().allFree())).isTrue();
        }
    }

    /** The prefill node whose pages a request's transfer took. */
    private static String prefillNodeOf(ClusterFixture pki, long requestId) {
        return pki.lineage.stream().filter(e -> e.kind() == LineageEvent.Kind.TRANSFER_OUT && e.requestId() == requestId)
                .map(LineageEvent::worker).distinct().reduce((x, y) -> x + "," + y).orElseThrow();
    }
}
