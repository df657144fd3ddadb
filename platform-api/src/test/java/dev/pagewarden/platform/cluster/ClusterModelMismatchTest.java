package dev.pagewarden.platform.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pagewarden.core.cluster.DecodeNode;
import dev.pagewarden.core.cluster.NodeOptions;
import dev.pagewarden.core.cluster.PrefillNode;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.transfer.net.CertificateAuthority;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.platform.testing.ModelRequired;
import dev.pagewarden.platform.testing.PlainHttp;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Engine nodes that serve another model file than the platform loaded (here the same weights under another
 * name, so that only the id differs) get no request: each is refused with {@code engine_misconfigured}.
 */
@ExtendWith(ModelRequired.class)
class ClusterModelMismatchTest {
    static final String ADMIN = "cluster-mismatch-admin-token-0123456789";

    @TempDir
    Path dir;

    @Test
    void requestsAreRefusedWhileTheNodesServeAnotherModel() throws Exception {
        Path pki = Files.createDirectories(dir.resolve("pki"));
        Instant now = Instant.now();
        CertificateAuthority ca = CertificateAuthority.create("cluster-ca", now.minus(Duration.ofHours(1)),
                now.plus(Duration.ofDays(1)));
        ca.write(pki.resolve("ca.crt"), pki.resolve("ca.key"));
        for (String name : new String[] {"prefill-a", "decode-a", "platform"}) {
            ca.issue(name, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)))
                    .write(pki.resolve(name + ".crt"), pki.resolve(name + ".key"));
        }
        Path other = Files.copy(TestModels.stories260K(), dir.resolve("other-model.bin"));
        EngineConfig config = EngineConfig.builder().backend("cpu").threads(1).build();
        try (LoadedModel model = ModelLoader.load(other, TestModels.tok512());
             PrefillNode prefill = PrefillNode.start(model, config, options("prefill-a"), ClusterTls.load(pki, "prefill-a"), e -> { });
             DecodeNode decode = DecodeNode.start(model, config, options("decode-a"), ClusterTls.load(pki, "decode-a"), e -> { });
             ConfigurableApplicationContext app = StandalonePlatform.start("pagewarden.home=" + dir.resolve("home"),
                     "pagewarden.admin-token=" + ADMIN, "pagewarden.model.path=" + TestModels.stories260K(),
                     "pagewarden.model.tokenizer=" + TestModels.tok512(), "pagewarden.engine.canary-interval=0s",
                     "pagewarden.engine.nodes=prefill@127.0.0.1:" + prefill.port() + ",decode@127.0.0.1:" + decode.port(),
                     "pagewarden.engine.tls-dir=" + pki)) {
            PlainHttp http = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.server.port"));
            String key = http.newTenantKey(ADMIN, "mismatch-user");
            String body = "{\"model\":\"stories260K\",\"prompt\":[1,403,407],\"max_tokens\":4,\"temperature\":0}";
            // until both nodes are live the answer is engine_unavailable; then the ids are compared
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            HttpResponse<String> r;
            do {
                r = http.send(http.post("/v1/completions", key, body));
            } while (r.body().contains("engine_unavailable") && System.nanoTime() < deadline && sleep());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            assertThat(new ObjectMapper().readTree(r.body()).path("error").path("code").asText())
                    .isEqualTo("engine_misconfigured");
            assertThat(r.headers().firstValue("Retry-After")).isEmpty();
        }
    }

    private static boolean sleep() throws InterruptedException {
        Thread.sleep(50);
        return true;
    }

    private static NodeOptions options(String name) {
        return new NodeOptions(name, "127.0.0.1", 0, "127.0.0.1", NodeOptions.DEFAULT_HEARTBEAT, NodeOptions.DEFAULT_TIMEOUT);
    }
}
