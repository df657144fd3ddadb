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
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pages on demand on a decode node: requests reserve their prompt's pages plus a headroom page and grow as they
 * decode, so more of them run at once than whole reservations allow; when the pool runs out, the node preempts
 * the most recently admitted running request and fails it with preempted_too_often (its re-prefill would need a
 * prefill node). Every request that finishes gives the tokens it gives alone; every page comes back.
 */
class ClusterDecodePagesTest extends RealModelTest {
    @TempDir
    Path dir;

    @Test
    void decodeGrowsPageByPageAndAPreemptedRequestFailsWhileTheOthersFinishAsAlone() throws Exception {
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            // 20 prompt tokens + 480 new: 32 pages each when done, 3 reserved at admission
            requests.add(new GenerationRequest("tenant-" + i, IsolationFixtures.prompt(20, i), 480,
                    new SamplingParams(0f, 1f, 0, true)));
        }
        EngineConfig config = ClusterFixture.config();
        List<int[]> alone = new ArrayList<>();
        try (Engine engine = Engine.builder(model, config).build()) {
            for (GenerationRequest r : requests) {
                alone.add(engine.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens());
            }
        }
        // 40 pages: one whole request fits (32), two do not, but all four reservations do (12)
        EngineConfig onDemand = config.toBuilder().decodeHeadroomPages(1).poolTokens(0, 640).build();
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, onDemand, "decode-a", 0);
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
            // all four were admitted at once (more than whole reservations allow), so the pool ran out
            assertThat(decode.pool().peakUsedPages()).isEqualTo(40);
            assertThat(failed).isNotEmpty();
            assertThat(finished).isPositive();
            // the PREEMPT steps are those of the failed requests, on the decode node only
            Set<Long> preempted = new TreeSet<>();
            for (LineageEvent e : pki.lineage) {
                if (e.kind() == LineageEvent.Kind.PREEMPT) {
                    assertThat(e.worker()).isEqualTo("decode-a");
                    preempted.add(e.requestId());
                }
            }
            assertThat(preempted).isEqualTo(failed);
            assertThat(IsolationFixtures.eventually(10_000, () -> decode.pool().allFree() && prefill.pool().allFree()
                    && decode.inFlight() == 0)).isTrue();
        }
    }
}
