package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
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
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pages on demand on a decode node: requests reserve their prompt's pages plus a headroom page and grow as they
 * decode, so more of them run at once than whole reservations allow; when the pool runs out, the node preempts
 * the most recently admitted running request as one process does: its pages go (PREEMPT on the decode node), it
 * waits for pages again, its prefill node re-prefills the prompt and the tokens generated so far (a second transfer)
 * and it goes on where it stood. Every request gives the tokens it gives alone; every page comes back. Preempted
 * more often than the node allows, a request fails with preempted_too_often.
 */
class ClusterDecodePagesTest extends RealModelTest {
    private static final int PROMPT = 20;

    @TempDir
    Path dir;

    private static List<GenerationRequest> requests() {
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            // 20 prompt tokens + 480 new: 32 pages each when done, 3 reserved at admission; the two admitted last
            // (preempted first) sample with a seed, which must draw on after a re-prefill as if uninterrupted
            requests.add(new GenerationRequest("tenant-" + i, IsolationFixtures.prompt(PROMPT, i), 480,
                    i < 2 ? new SamplingParams(0f, 1f, 0, true) : new SamplingParams(0.9f, 0.95f, 40 + i, true)));
        }
        return requests;
    }

    private List<int[]> alone(List<GenerationRequest> requests, EngineConfig config) throws Exception {
        List<int[]> alone = new ArrayList<>();
        try (Engine engine = Engine.builder(model, config).build()) {
            for (GenerationRequest r : requests) {
                alone.add(engine.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens());
            }
        }
        return alone;
    }

    /** 40 pages: one whole request fits (32), two do not, but all four reservations do (12). */
    private static EngineConfig onDemand(EngineConfig config) {
        return config.toBuilder().decodeHeadroomPages(1).poolTokens(0, 640).build();
    }

    /** The requests with a PREEMPT step, each of which must be on the decode node. */
    private Set<Long> preempted(ClusterFixture pki) {
        Set<Long> preempted = new TreeSet<>();
        for (LineageEvent e : pki.lineage) {
            if (e.kind() == LineageEvent.Kind.PREEMPT) {
                assertThat(e.worker()).isEqualTo("decode-a");
                preempted.add(e.requestId());
            }
        }
        return preempted;
    }

    @Test
    void decodeGrowsPageByPageAndAPreemptedRequestIsReprefilledAndFinishesAsAlone() throws Exception {
        List<GenerationRequest> requests = requests();
        EngineConfig config = ClusterFixture.config();
        List<int[]> alone = alone(requests, config);
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, onDemand(config), "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            List<RequestHandle> handles = new ArrayList<>();
            List<List<Integer>> streamed = new ArrayList<>();
            for (GenerationRequest r : requests) {
                List<Integer> tokens = Collections.synchronizedList(new ArrayList<>());
                streamed.add(tokens);
                handles.add(cluster.submit(r, (id, token) -> tokens.add(token)));
            }
            for (int i = 0; i < handles.size(); i++) {
                int[] out = handles.get(i).result().get(60, TimeUnit.SECONDS).outputTokens();
                assertThat(out).as("request %d", i).isEqualTo(alone.get(i));
                // the client saw a pause only: no token twice, none missing
                assertThat(streamed.get(i)).as("request %d streamed", i)
                        .containsExactlyElementsOf(Arrays.stream(alone.get(i)).boxed().toList());
            }
            // all four were admitted at once (more than whole reservations allow), so the pool ran out
            assertThat(decode.pool().peakUsedPages()).isEqualTo(40);
            Set<Long> preempted = preempted(pki);
            assertThat(preempted).containsAnyOf(handles.get(2).id(), handles.get(3).id());
            Map<Long, Set<Integer>> generations = new TreeMap<>();
            Map<Long, Integer> prefillWritten = new TreeMap<>();
            for (LineageEvent e : pki.lineage) {
                if (e.kind() == LineageEvent.Kind.TRANSFER_OUT && e.worker().equals("prefill-a")) {
                    generations.computeIfAbsent(e.requestId(), k -> new TreeSet<>()).add(e.generation());
                }
                if (e.kind() == LineageEvent.Kind.WRITE && e.worker().equals("prefill-a")) {
                    prefillWritten.merge(e.requestId(), e.slotTo() - e.slotFrom(), Integer::sum);
                }
            }
            for (RequestHandle h : handles) {
                if (preempted.contains(h.id())) {
                    // re-prefilled: a second transfer, of the prompt and the tokens generated before the preemption
                    assertThat(generations.get(h.id())).as("request %d", h.id()).contains(1, 2);
                    assertThat(prefillWritten.get(h.id())).as("request %d", h.id()).isGreaterThan(2 * PROMPT);
                } else {
                    assertThat(generations.get(h.id())).as("request %d", h.id()).containsExactly(1);
                    assertThat(prefillWritten.get(h.id())).as("request %d", h.id()).isEqualTo(PROMPT);
                }
            }
            assertThat(IsolationFixtures.eventually(10_000, () -> decode.pool().allFree() && prefill.pool().allFree()
                    && decode.inFlight() == 0)).isTrue();
        }
    }

    @Test
    void aRequestPreemptedMoreOftenThanAllowedFailsWhileTheOthersFinishAsAlone() throws Exception {
        List<GenerationRequest> requests = requests();
        EngineConfig config = ClusterFixture.config();
        List<int[]> alone = alone(requests, config);
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, onDemand(config).toBuilder().maxPreemptions(0).build(), "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            List<RequestHandle> handles = new ArrayList<>();
            for (GenerationRequest r : requests) {
                handles.add(cluster.submit(r, TokenListener.NONE));
            }
            Set<Long> failed = new TreeSet<>();
            int finished = 0;
            for (int i = 0; i < handles.size(); i++) {
                try {
                    assertThat(handles.get(i).result().get(60, TimeUnit.SECONDS).outputTokens()).as("request %d", i)
                            .isEqualTo(alone.get(i));
                    finished++;
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOfSatisfying(RequestFailedException.class,
                            f -> assertThat(f.code()).isEqualTo("preempted_too_often"));
                    failed.add(handles.get(i).id());
                }
            }
            assertThat(decode.pool().peakUsedPages()).isEqualTo(40);
            assertThat(failed).isNotEmpty();
            assertThat(finished).isPositive();
            // the PREEMPT steps are those of the failed requests, on the decode node only
            assertThat(preempted(pki)).isEqualTo(failed);
            assertThat(IsolationFixtures.eventually(10_000, () -> decode.pool().allFree() && prefill.pool().allFree()
                    && decode.inFlight() == 0)).isTrue();
        }
    }
}
