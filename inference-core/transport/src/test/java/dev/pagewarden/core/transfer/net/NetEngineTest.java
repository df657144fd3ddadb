package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.transfer.KvTransport;
import dev.pagewarden.core.transfer.TransferJob;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An engine whose pages cross a TLS connection on loopback decodes exactly what the in-process engine
 * decodes: the same greedy tokens for every request of a batch, and every page back in its pool.
 */
class NetEngineTest extends RealModelTest {
    static final TestPki PKI = new TestPki("pagewarden-test-ca");

    /** A network transport to a server on this engine's own decode pool; closing it closes both. */
    static Engine.TransportFactory overTheWire() {
        return (receiver, layout) -> {
            NetKvServer server = new NetKvServer("decode-0");
            try {
                int port = server.start("127.0.0.1", 0, PKI.node("decode-0").serverContext(), receiver, layout);
                NetKvTransport client = new NetKvTransport("127.0.0.1", port, PKI.node("prefill-0").clientContext(),
                        "prefill-0", Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(30), 4);
                return new KvTransport() {
                    @Override
                    public void send(TransferJob job) {
                        client.send(job);
                    }

                    @Override
                    public void close() {
                        client.close();
                        server.close();
                    }
                };
            } catch (Exception e) {
                server.close();
                throw new IllegalStateException(e);
            }
        };
    }

    static List<int[]> run(Engine.Builder builder, List<GenerationRequest> requests) throws Exception {
        List<int[]> out = new ArrayList<>();
        try (Engine engine = builder.build()) {
            List<RequestHandle> handles = new ArrayList<>();
            for (GenerationRequest r : requests) {
                handles.add(engine.submit(r, TokenListener.NONE));
            }
            for (RequestHandle h : handles) {
                out.add(h.result().get(120, TimeUnit.SECONDS).outputTokens());
            }
            // prefill pages come back when the transfer's outcome is reported, just after the result
            assertThat(IsolationFixtures.eventually(10_000, () -> engine.prefillPool().allFree())).isTrue();
            assertThat(engine.decodePool().allFree()).isTrue();
        }
        return out;
    }

    @Test
    void greedyOutputsOverTheWireEqualTheInProcessEngines() throws Exception {
        List<GenerationRequest> requests = new ArrayList<>();
        int[] lengths = {1, 5, 16, 17, 40, 63, 3, 31};
        for (int i = 0; i < lengths.length; i++) {
            requests.add(new GenerationRequest("tenant-" + i % 3, IsolationFixtures.prompt(lengths[i], i), 24,
                    SamplingParams.greedy()));
        }
        EngineConfig config = EngineConfig.builder().backend("cpu").build();

        List<int[]> inProcess = run(Engine.builder(model, config), requests);
        List<int[]> wire = run(Engine.builder(model, config).transport(overTheWire()), requests);

        for (int i = 0; i < requests.size(); i++) {
            assertThat(wire.get(i)).as("request %d", i).isEqualTo(inProcess.get(i)).isNotEmpty();
        }
    }
}
