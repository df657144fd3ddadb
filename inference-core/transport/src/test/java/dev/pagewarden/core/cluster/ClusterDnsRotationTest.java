package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code dns:} decode entry over two real decode nodes on one port at two loopback addresses, with a resolver
 * of the test's own: a node whose address the name gains joins the rotation; one whose address it loses leaves
 * it at once, yet finishes the request it is serving (drained, not cut) before the client drops it.
 */
class ClusterDnsRotationTest extends RealModelTest {
    @TempDir
    Path dir;

    @Test
    void nodesJoinAndLeaveWithTheNameAndALeavingNodeFinishesItsRequest() throws Exception {
        EngineConfig config = ClusterFixture.config();
        GenerationRequest longOne = new GenerationRequest("t", IsolationFixtures.prompt(8, 1), 440,
                new SamplingParams(0f, 1f, 0, true));
        GenerationRequest shortOne = new GenerationRequest("t", IsolationFixtures.prompt(12, 2), 16, SamplingParams.greedy());
        int[] longExpected;
        int[] shortExpected;
        try (Engine engine = Engine.builder(model, config).build()) {
            longExpected = engine.submit(longOne, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
            shortExpected = engine.submit(shortOne, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
        }
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        Map<String, List<String>> dns = new ConcurrentHashMap<>(Map.of("decode.svc", List.of("127.0.0.1")));
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode a = pki.decode(model, config, "decode-a", 0);
             DecodeNode b = DecodeNode.start(model, config, new NodeOptions("decode-b", "127.0.0.2", a.port(), "127.0.0.2",
                     ClusterFixture.HEARTBEAT, Duration.ofSeconds(5)), pki.tls("decode-b"), e -> { })) {
            ClusterOptions options = ClusterOptions.defaults("platform").withHeartbeat(ClusterFixture.HEARTBEAT)
                    .withMaxBackoff(Duration.ofMillis(400)).withResolveEvery(Duration.ofMillis(50));
            List<NodeAddress> nodes = List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                    new NodeAddress(NodeRole.DECODE, "decode.svc", a.port(), true));
            try (ClusterEngine cluster = ClusterEngine.connect(nodes, pki.tls("platform"), options,
                    dev.pagewarden.core.lineage.LineageSink.NONE, null,
                    host -> dns.getOrDefault(host, List.of(host)))) { // the prefill node's address is its own answer
                assertThat(IsolationFixtures.eventually(30_000, () -> cluster.liveNodes().size() == 2)).isTrue();
                RequestHandle serving = cluster.submit(longOne, TokenListener.NONE); // decode-a is the only decode node
                assertThat(IsolationFixtures.eventually(30_000, () -> a.inFlight() > 0)).isTrue();

                // the name now lists only decode-b: it joins, decode-a leaves the rotation at once
                dns.put("decode.svc", List.of("127.0.0.2"));
                assertThat(IsolationFixtures.eventually(15_000, () -> names(cluster).equals(List.of("decode-b", "prefill-a"))))
                        .as("%s", cluster.liveNodes()).isTrue();
                assertThat(cluster.submit(shortOne, TokenListener.NONE).result().get(30, TimeUnit.SECONDS).outputTokens())
                        .isEqualTo(shortExpected);
                assertThat(b.pool().peakUsedPages()).isPositive();

                // the request decode-a was serving is finished there, not failed
                assertThat(serving.result().get(60, TimeUnit.SECONDS).outputTokens()).isEqualTo(longExpected);
                String aMember = "decode@127.0.0.1:" + a.port();
                assertThat(IsolationFixtures.eventually(15_000, () -> !cluster.members().contains(aMember)))
                        .as("%s", cluster.members()).isTrue();

                // listed again: back in rotation
                dns.put("decode.svc", List.of("127.0.0.1", "127.0.0.2"));
                assertThat(IsolationFixtures.eventually(15_000, () -> names(cluster).equals(List.of("decode-a", "decode-b",
                        "prefill-a")))).as("%s", cluster.liveNodes()).isTrue();
            }
        }
    }

    private static List<String> names(ClusterEngine cluster) {
        return cluster.nodes().stream().map(ClusterEngine.NodeReport::node).sorted().toList();
    }
}
