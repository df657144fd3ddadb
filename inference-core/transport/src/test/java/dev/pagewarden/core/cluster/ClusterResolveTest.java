package dev.pagewarden.core.cluster;

import dev.pagewarden.core.lineage.LineageSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Names looked up again while the client runs (a resolver of the test's own, no DNS): a {@code dns:} entry's
 * members follow its answers, a plain host's stay once seen, and a lookup that fails or hangs changes nothing.
 * No node listens at these addresses: membership is what is checked here, the rotation of real nodes in
 * ClusterDnsRotationTest.
 */
class ClusterResolveTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final Map<String, List<String>> dns = new ConcurrentHashMap<>();
    private final AtomicInteger lookups = new AtomicInteger();
    private volatile CountDownLatch hang;

    private List<String> lookUp(String name) throws UnknownHostException {
        lookups.incrementAndGet();
        CountDownLatch h = hang;
        if (h != null) {
            try {
                h.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        List<String> ips = dns.get(name);
        if (ips == null) {
            throw new UnknownHostException(name + ": no such name");
        }
        return ips;
    }

    @Test
    void dnsMembersFollowTheAnswersAndFailedLookupsChangeNothing() throws Exception {
        dns.put("prefill.svc", List.of("127.0.0.9"));
        dns.put("decode.svc", List.of("127.0.0.2", "127.0.0.3"));
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        ClusterOptions options = ClusterOptions.defaults("platform").withHeartbeat(ClusterFixture.HEARTBEAT)
                .withResolveEvery(Duration.ofMillis(50)).withTimeout(Duration.ofMillis(300));
        List<NodeAddress> nodes = NodeAddress.parseList("prefill@prefill.svc:7400,decode@dns:decode.svc:7401");
        try (ClusterEngine cluster = ClusterEngine.connect(nodes, pki.tls("platform"), options, LineageSink.NONE, null,
                this::lookUp)) {
            assertThat(cluster.members()).containsExactlyInAnyOrder("prefill@127.0.0.9:7400", "decode@127.0.0.2:7401",
                    "decode@127.0.0.3:7401");

            // a pod goes, another comes; the plain host's old address stays a member
            dns.put("decode.svc", List.of("127.0.0.3", "127.0.0.4"));
            dns.put("prefill.svc", List.of("127.0.0.8"));
            await(() -> cluster.members().contains("decode@127.0.0.4:7401") && !cluster.members().contains("decode@127.0.0.2:7401")
                    && cluster.members().contains("prefill@127.0.0.8:7400"));
            assertThat(cluster.members()).containsExactlyInAnyOrder("prefill@127.0.0.9:7400", "prefill@127.0.0.8:7400",
                    "decode@127.0.0.3:7401", "decode@127.0.0.4:7401");

            // the name stops resolving: its last answer stands
            dns.remove("decode.svc");
            int before = lookups.get();
            await(() -> lookups.get() >= before + 6);
            assertThat(cluster.members()).contains("decode@127.0.0.3:7401", "decode@127.0.0.4:7401");

            // lookups that hang past the timeout: the same, and the client keeps checking its nodes
            dns.put("decode.svc", List.of());
            hang = new CountDownLatch(1);
            int hung = lookups.get();
            await(() -> lookups.get() >= hung + 4); // two rounds, each timed out
            assertThat(cluster.members()).contains("decode@127.0.0.3:7401", "decode@127.0.0.4:7401");
            hang.countDown();
            hang = null;

            // an empty answer: every decode member leaves
            await(() -> cluster.members().stream().noneMatch(m -> m.startsWith("decode@")));
            dns.put("decode.svc", List.of("127.0.0.2"));
            await(() -> cluster.members().contains("decode@127.0.0.2:7401"));
        }
    }

    private static void await(Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.get()) {
            assertThat(System.nanoTime() - deadline).as("condition within %s", WAIT).isNegative();
            Thread.sleep(10);
        }
    }
}
