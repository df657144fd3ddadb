package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One prefill node and two decode nodes as child processes, a {@link ClusterEngine} in this JVM recording the
 * nodes' lineage: a seeded multi-tenant workload (some requests aborted mid-stream, some over the window),
 * then a decode node killed with SIGKILL while it streams and restarted on its port. Every completed output is
 * the same request's alone on a fresh in-process engine (greedy: batching and routing change no token), every
 * request that fails streamed only a prefix of its own output, every pool ends free, and no page epoch a
 * request of one tenant wrote is read by a request of another, as the recorded lineage says.
 */
class ClusterProcessWorkloadTest extends RealModelTest {
    private static final long SEED = 0x5eed_2026L;
    private static final int WINDOW = 512;
    private static final String[] POOL = {"--pool-tokens", "8192"};

    @TempDir
    Path dir;

    /** A request as the test sends it, the tokens streamed to it, and whether it is aborted after {@code abortAfter} tokens. */
    private record Sent(GenerationRequest request, RequestHandle handle, List<Integer> streamed, int abortAfter) {
    }

    @Test
    void aMultiTenantWorkloadOnNodeProcessesMatchesTheEngineAloneSurvivesAKilledDecodeNodeAndCrossesNoTenant() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        for (String n : List.of("prefill-a", "decode-a", "decode-b")) {
            pki.tls(n);
        }
        List<LineageEvent> lineage = new CopyOnWriteArrayList<>();
        List<Process> nodes = new CopyOnWriteArrayList<>();
        try {
            Process prefill = NodeProcesses.start(dir, "prefill", "prefill-a", 0, POOL);
            nodes.add(prefill);
            Process decodeA = NodeProcesses.start(dir, "decode", "decode-a", 0, POOL);
            nodes.add(decodeA);
            Process decodeB = NodeProcesses.start(dir, "decode", "decode-b", 0, POOL);
            nodes.add(decodeB);
            int prefillPort = port(prefill);
            int portA = port(decodeA);
            int portB = port(decodeB);
            try (ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefillPort),
                    ClusterFixture.at(NodeRole.DECODE, portA), ClusterFixture.at(NodeRole.DECODE, portB)), lineage::add)) {
                assertThat(IsolationFixtures.eventually(30_000, () -> cluster.liveNodes().size() == 3))
                        .as("%s", cluster.liveNodes()).isTrue();

                workload(cluster, lineage);
                killADecodeNodeWhileItStreams(cluster, decodeA);
                assertThat(decodeA.waitFor(10, TimeUnit.SECONDS)).isTrue();

                // the same node back on its port rejoins and takes work
                Process again = NodeProcesses.start(dir, "decode", "decode-a", portA, POOL);
                nodes.add(again);
                assertThat(port(again)).isEqualTo(portA);
                assertThat(IsolationFixtures.eventually(30_000, () -> cluster.liveNodes().size() == 3))
                        .as("%s", cluster.liveNodes()).isTrue();
                List<Sent> after = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    after.add(send(cluster, new GenerationRequest("tenant-" + i, prompt(new Random(SEED + i), 24), 24,
                            SamplingParams.greedy()), 0));
                }
                for (Sent s : after) {
                    assertCompletedAsAlone(s);
                }
                assertThat(IsolationFixtures.eventually(10_000, () -> report(cluster, "decode-a") != null
                        && report(cluster, "decode-a").pool().peakUsedPages() > 0)).as("%s", cluster.nodes()).isTrue();

                // every pool free again, as the nodes' STATUS says
                assertThat(IsolationFixtures.eventually(15_000, () -> cluster.nodes().size() == 3
                        && cluster.nodes().stream().allMatch(n -> n.pool().allFree())))
                        .as("%s", cluster.nodes()).isTrue();
                assertThat(cluster.inFlight()).isZero();
            }
            assertNoCrossTenantRead(lineage);
        } finally {
            for (Process n : nodes) {
                n.destroyForcibly();
            }
        }
    }

    /**
     * 24 seeded requests from 3 tenants at once: a few over the window (refused before any page), a few aborted
     * after their first tokens, the rest completed with the engine-alone tokens.
     */
    private void workload(ClusterEngine cluster, List<LineageEvent> lineage) throws Exception {
        Random rnd = new Random(SEED);
        // 0: over the window, 1: aborted, 2: completed; in a seeded order
        List<Integer> kinds = new ArrayList<>(java.util.Collections.nCopies(16, 2));
        kinds.addAll(List.of(0, 0, 0, 0, 1, 1, 1, 1));
        java.util.Collections.shuffle(kinds, rnd);
        List<Sent> sent = new ArrayList<>();
        for (int kind : kinds) {
            String tenant = "tenant-" + rnd.nextInt(3);
            GenerationRequest r;
            int abortAfter = 0;
            if (kind == 0) {
                r = new GenerationRequest(tenant, prompt(rnd, 200 + rnd.nextInt(200)), 400, SamplingParams.greedy());
            } else if (kind == 1) {
                // long enough (EOS ignored) that the abort lands mid-stream
                r = new GenerationRequest(tenant, prompt(rnd, 4 + rnd.nextInt(60)), 300, new SamplingParams(0f, 1f, 0, true));
                abortAfter = 1 + rnd.nextInt(4);
            } else {
                r = new GenerationRequest(tenant, prompt(rnd, 4 + rnd.nextInt(120)), 8 + rnd.nextInt(40), SamplingParams.greedy());
            }
            assertThat(r.promptLength() + r.maxNewTokens() > WINDOW).isEqualTo(kind == 0);
            sent.add(send(cluster, r, abortAfter));
        }

        int completed = 0;
        for (Sent s : sent) {
            if (s.request().promptLength() + s.request().maxNewTokens() > WINDOW) {
                ExecutionException e = failure(s);
                assertThat(e.getCause()).isInstanceOfSatisfying(RequestRejectedException.class,
                        x -> assertThat(x.code()).isEqualTo("context_length_exceeded"));
                assertThat(s.streamed()).isEmpty();
            } else if (s.abortAfter() > 0) {
                assertThat(failure(s).getCause()).isInstanceOf(RequestAbortedException.class);
                assertThat(s.streamed().size()).isGreaterThanOrEqualTo(s.abortAfter()).isLessThan(s.request().maxNewTokens());
                assertStreamedPrefixOfAlone(s);
            } else {
                assertCompletedAsAlone(s);
                completed++;
            }
        }
        assertThat(completed).isEqualTo(16);
        // refused at admission: no node ever allocated a page for them
        Set<Long> refused = new HashSet<>();
        for (Sent s : sent) {
            if (s.request().promptLength() + s.request().maxNewTokens() > WINDOW) {
                refused.add(s.handle().id());
            }
        }
        assertThat(lineage).noneMatch(e -> refused.contains(e.requestId()));
    }

    /** Long streams on both decode nodes; decode-a is killed while they run. */
    private void killADecodeNodeWhileItStreams(ClusterEngine cluster, Process decodeA) throws Exception {
        List<Sent> streams = new ArrayList<>();
        Random rnd = new Random(SEED ^ 0xdeadL);
        for (int i = 0; i < 6; i++) {
            streams.add(send(cluster, new GenerationRequest("tenant-" + i % 3, prompt(rnd, 8 + rnd.nextInt(24)), 440,
                    new SamplingParams(0f, 1f, 0, true)), 0));
        }
        // decode-a holds pages of running streams and some tokens are out
        assertThat(IsolationFixtures.eventually(30_000, () -> {
            ClusterEngine.NodeReport a = report(cluster, "decode-a");
            return a != null && a.pool().freePages() < a.pool().capacityPages()
                    && streams.stream().anyMatch(s -> s.streamed().size() > 4);
        })).as("%s", cluster.nodes()).isTrue();
        decodeA.destroyForcibly(); // SIGKILL: no goodbye on the connection

        int lost = 0;
        for (Sent s : streams) {
            try {
                s.handle().result().get(60, TimeUnit.SECONDS);
                assertCompletedAsAlone(s);
            } catch (ExecutionException e) {
                assertThat(e.getCause()).isInstanceOfSatisfying(RequestFailedException.class,
                        f -> assertThat(f.code()).isEqualTo(ClusterEngine.NODE_LOST));
                assertStreamedPrefixOfAlone(s); // never another request's text
                lost++;
            }
        }
        assertThat(lost).as("streams lost with decode-a").isPositive();

        // out of rotation; decode-b keeps serving new requests
        assertThat(IsolationFixtures.eventually(10_000, () -> cluster.liveNodes().size() == 2
                && cluster.liveNodes().stream().noneMatch(n -> n.startsWith("decode-a")))).as("%s", cluster.liveNodes()).isTrue();
        for (int i = 0; i < 3; i++) {
            assertCompletedAsAlone(send(cluster, new GenerationRequest("tenant-" + i, prompt(rnd, 16), 16,
                    SamplingParams.greedy()), 0));
        }
    }

    private static Sent send(ClusterEngine cluster, GenerationRequest r, int abortAfter) {
        List<Integer> streamed = new CopyOnWriteArrayList<>();
        RequestHandle[] self = new RequestHandle[1];
        Object lock = new Object();
        TokenListener listener = (id, token) -> {
            streamed.add(token);
            if (abortAfter > 0 && streamed.size() == abortAfter) {
                synchronized (lock) {
                    self[0].abort("client went away");
                }
            }
        };
        synchronized (lock) { // a token before the handle is known waits for it
            self[0] = cluster.submit(r, listener);
        }
        return new Sent(r, self[0], streamed, abortAfter);
    }

    private static ExecutionException failure(Sent s) throws Exception {
        try {
            s.handle().result().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e;
        }
        throw new AssertionError("request " + s.handle().id() + " completed; expected it to fail");
    }

    private static void assertCompletedAsAlone(Sent s) throws Exception {
        int[] got = s.handle().result().get(60, TimeUnit.SECONDS).outputTokens();
        assertThat(got).as("request %d (%s)", s.handle().id(), s.request().tenant()).isEqualTo(alone(s.request()));
        assertThat(s.streamed()).containsExactly(java.util.Arrays.stream(got).boxed().toArray(Integer[]::new));
    }

    private static void assertStreamedPrefixOfAlone(Sent s) throws Exception {
        int[] expected = alone(s.request());
        List<Integer> got = List.copyOf(s.streamed());
        assertThat(got.size()).isLessThanOrEqualTo(expected.length);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i)).as("token %d of request %d", i, s.handle().id()).isEqualTo(expected[i]);
        }
    }

    /** The request alone on a fresh in-process engine: the oracle. */
    private static int[] alone(GenerationRequest r) throws Exception {
        try (Engine engine = Engine.builder(model, ClusterFixture.config()).build()) {
            return engine.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
        }
    }

    /**
     * Written from the recorded events alone: a page epoch on a node is written by the tenant of its ALLOCATE,
     * WRITE and TRANSFER_IN steps; a BIND_READ or READ_FINAL of it by a request of another tenant is a crossing.
     */
    private static void assertNoCrossTenantRead(List<LineageEvent> lineage) {
        Map<String, Set<String>> writers = new HashMap<>();
        List<LineageEvent> reads = new ArrayList<>();
        for (LineageEvent e : lineage) {
            switch (e.kind()) {
                case ALLOCATE, WRITE, TRANSFER_IN -> {
                    if (e.tenant() != null) {
                        writers.computeIfAbsent(key(e), k -> new HashSet<>()).add(e.tenant());
                    }
                }
                case BIND_READ, READ_FINAL -> reads.add(e);
                default -> { }
            }
        }
        assertThat(reads).as("reads recorded").isNotEmpty();
        assertThat(writers).as("writes recorded").isNotEmpty();
        List<String> crossings = new ArrayList<>();
        for (LineageEvent r : reads) {
            for (String w : writers.getOrDefault(key(r), Set.of())) {
                if (!w.equals(r.tenant())) {
                    crossings.add(key(r) + " written by " + w + ", read by request " + r.requestId() + " of " + r.tenant());
                }
            }
        }
        assertThat(crossings).isEmpty();
        // the check has something to bite on: most reads name a page epoch whose writer was recorded
        assertThat(reads.stream().filter(r -> writers.containsKey(key(r))).count()).isPositive();
        assertThat(lineage.stream().map(LineageEvent::node).distinct()).contains("prefill-a", "decode-a", "decode-b");
    }

    private static String key(LineageEvent e) {
        return e.node() + "/" + e.worker() + "/" + e.page() + "/" + e.epoch();
    }

    private static ClusterEngine.NodeReport report(ClusterEngine cluster, String node) {
        return cluster.nodes().stream().filter(n -> n.node().equals(node)).findFirst().orElse(null);
    }

    private static int port(Process node) throws Exception {
        return Integer.parseInt(NodeProcesses.listening(node).group(3));
    }

    private static int[] prompt(Random rnd, int len) {
        int[] p = new int[len];
        p[0] = 1;
        for (int i = 1; i < len; i++) {
            p[i] = 3 + rnd.nextInt(500);
        }
        return p;
    }
}
