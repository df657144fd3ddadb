package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.transfer.net.ControlHandler;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;
import dev.pagewarden.core.transfer.net.NetKvServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Engine nodes forward their page life steps to the platform over the control connection (TLS on loopback): the
 * platform's sink gets every step each node recorded, named after that node, and a node cannot write another
 * node's lineage.
 */
class NodeLineageTest extends RealModelTest {
    @TempDir
    Path dir;

    @Test
    void everyStepOfBothNodesReachesThePlatformsSinkNamingItsNode() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        EngineConfig config = ClusterFixture.config();
        List<LineageEvent> platform = new CopyOnWriteArrayList<>();
        List<LineageEvent> intruderGot = new CopyOnWriteArrayList<>();
        List<GenerationRequest> requests = ClusterEngineTest.batch(i -> new SamplingParams(0.9f, 0.95f, 7 + i));
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, config, "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())), platform::add);
             ClusterEngine intruder = ClusterEngine.connect(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())), pki.tls("intruder"),
                     ClusterOptions.defaults("intruder").withHeartbeat(ClusterFixture.HEARTBEAT), intruderGot::add, null)) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            assertThat(intruder.awaitReady(Duration.ofSeconds(30))).isTrue();
            ClusterEngineTest.run(cluster, requests);
            assertThat(IsolationFixtures.eventually(10_000, () -> prefill.pool().allFree() && decode.pool().allFree()))
                    .isTrue();
            // oracle: what each node's own sink saw, in this process
            assertThat(IsolationFixtures.eventually(10_000, () -> ids(platform).containsAll(ids(pki.lineage)))).isTrue();
            Map<Long, LineageEvent> sent = new HashMap<>();
            pki.lineage.forEach(e -> sent.put(e.id(), e));
            for (LineageEvent e : platform) {
                assertThat(e).isEqualTo(sent.get(e.id())); // every field, the node included
            }
            assertThat(platform).extracting(LineageEvent::node).containsOnly("prefill-a", "decode-a")
                    .contains("prefill-a", "decode-a");
            // a page's transfer chain across the two nodes is whole at the platform: out on one, in on the other
            assertThat(platform).filteredOn(e -> e.kind() == LineageEvent.Kind.TRANSFER_OUT)
                    .allSatisfy(e -> assertThat(e.node()).isEqualTo("prefill-a")).isNotEmpty();
            assertThat(platform).filteredOn(e -> e.kind() == LineageEvent.Kind.TRANSFER_IN)
                    .allSatisfy(e -> assertThat(e.node()).isEqualTo("decode-a")).isNotEmpty();
            // another client of the cluster CA that is not the platform gets none of it
            assertThat(intruderGot).isEmpty();
            // acknowledged: the nodes report no backlog
            assertThat(IsolationFixtures.eventually(10_000, () -> cluster.nodes().size() == 2
                    && cluster.nodes().stream().allMatch(n -> n.lineageBacklog() == 0 && n.lineageAccepting()))).isTrue();
        }
    }

    @Test
    void aBatchNamingAnotherNodeIsRefusedAndItsConnectionClosed() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        List<LineageEvent> platform = new CopyOnWriteArrayList<>();
        List<ControlMessage.LineageAck> acks = new CopyOnWriteArrayList<>();
        CountDownLatch closed = new CountDownLatch(1);
        CountDownLatch acked = new CountDownLatch(1);
        ControlPeer[] toPlatform = new ControlPeer[1];
        CountDownLatch opened = new CountDownLatch(1);
        // a node with a genuine certificate (prefill-b) that tries to write decode-a's lineage
        NetKvServer rogue = new NetKvServer("prefill-b");
        rogue.controlHandler(new ControlHandler() {
            @Override
            public void opened(ControlPeer peer) {
                toPlatform[0] = peer;
                opened.countDown();
            }

            @Override
            public void received(ControlPeer from, ControlMessage message) {
                if (message instanceof ControlMessage.LineageAck a) {
                    acks.add(a);
                    acked.countDown();
                }
            }

            @Override
            public void closed(ControlPeer peer) {
                closed.countDown();
            }
        });
        int port = rogue.start("127.0.0.1", 0, pki.tls("prefill-b").serverContext(), null, KvLayout.of(model.config(), 16));
        try (ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, port)), platform::add)) {
            assertThat(opened.await(30, TimeUnit.SECONDS)).isTrue();
            LineageEvent own = release(1, "prefill-b");
            LineageEvent own2 = release(2, "prefill-b");
            toPlatform[0].send(new ControlMessage.Lineage(1, List.of(own, own2)));
            assertThat(acked.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(acks).containsExactly(new ControlMessage.LineageAck(2));
            assertThat(platform).containsExactly(own, own2);

            LineageEvent genuine = release(3, "prefill-b");
            LineageEvent forged = release(4, "decode-a");
            toPlatform[0].send(new ControlMessage.Lineage(3, List.of(genuine, forged)));
            assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(platform).containsExactly(own, own2); // the whole batch refused, the genuine event with it
            assertThat(acks).hasSize(1);
        } finally {
            rogue.close();
        }
    }

    @Test
    void noRequestGoesToANodeWhoseLineageBacklogIsAtItsBound() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        EngineConfig config = ClusterFixture.config();
        // a decode node that reports, every heartbeat, a lineage backlog at its bound
        NetKvServer backlogged = new NetKvServer("decode-b");
        Set<ControlPeer> platforms = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<ControlMessage> received = new CopyOnWriteArrayList<>();
        backlogged.controlHandler(new ControlHandler() {
            @Override
            public void opened(ControlPeer peer) {
                platforms.add(peer);
            }

            @Override
            public void received(ControlPeer from, ControlMessage message) {
                received.add(message);
            }
        });
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0)) {
            int port = backlogged.start("127.0.0.1", 0, pki.tls("decode-b").serverContext(), null,
                    KvLayout.of(model.config(), config.pageTokens()));
            java.util.concurrent.atomic.AtomicReference<ControlMessage.Status> full = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.ScheduledExecutorService beat = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            beat.scheduleAtFixedRate(() -> {
                ControlMessage.Status s = full.get();
                if (s != null) {
                    platforms.forEach(p -> p.send(s));
                }
            }, 0, 20, TimeUnit.MILLISECONDS);
            try (ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                    ClusterFixture.at(NodeRole.DECODE, port)))) {
                // the same model and pages as the prefill node (its backend picks the layout's order)
                assertThat(IsolationFixtures.eventually(30_000, () -> cluster.layout() != null)).isTrue();
                KvLayout layout = cluster.layout();
                full.set(new ControlMessage.Status("decode", "decode-b", prefill.modelId(), "cpu", model.config(), layout,
                        prefill.contextWindow(), new ControlMessage.Pool("decode-b", layout.pageTokens(), 128,
                        128L * layout.pageTokens(), 0, Map.of("free", 128)), 0, 0, 65_536, false));
                assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
                var handle = cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(5, 1), 4,
                        SamplingParams.greedy()), dev.pagewarden.core.request.TokenListener.NONE);
                assertThatThrownBy(() -> handle.result().get(10, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(dev.pagewarden.core.request.RequestRejectedException.class)
                        .hasMessageContaining("lineage backlog");
                assertThat(((dev.pagewarden.core.request.RequestRejectedException) org.assertj.core.api.Assertions
                        .catchThrowable(() -> handle.result().join()).getCause()).code()).isEqualTo("audit_backpressure");
                assertThat(received).noneMatch(m -> m instanceof ControlMessage.Submit);
            } finally {
                beat.shutdownNow();
            }
        } finally {
            backlogged.close();
        }
    }

    private static LineageEvent release(long id, String node) {
        return new LineageEvent(id, LineageEvent.Kind.RELEASE, id, node, node, 0, 1, 1, "t", -1, -1, null, -1, -1, 0, 0, true);
    }

    private static Set<Long> ids(List<LineageEvent> events) {
        Set<Long> out = new HashSet<>();
        events.forEach(e -> out.add(e.id()));
        return out;
    }
}
