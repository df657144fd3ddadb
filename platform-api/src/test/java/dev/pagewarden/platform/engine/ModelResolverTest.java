package dev.pagewarden.platform.engine;

import com.sun.net.httpserver.HttpServer;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A named model is fetched on first start from the (configurable) Hub endpoint into the platform's
 * model folder and verified; the second start needs no network; no network at all leaves the
 * platform without a model and a reason, not a crash.
 */
class ModelResolverTest {

    private static PagewardenProperties properties(Path home, String name, String endpoint) {
        return new PagewardenProperties(new PagewardenProperties.Model(null, null, null, name, endpoint),
                null, null, null, null, new PagewardenProperties.Lab(false, List.of()), home, null);
    }

    @Test
    void namedModelIsDownloadedOnceFromTheMirrorThenServedFromDisk(@TempDir Path home) throws Exception {
        Map<String, byte[]> files = Map.of(
                "/karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin", Files.readAllBytes(TestModels.stories260K()),
                "/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin", Files.readAllBytes(TestModels.tok512()));
        AtomicInteger requests = new AtomicInteger();
        HttpServer mirror = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        mirror.createContext("/", exchange -> {
            requests.incrementAndGet();
            byte[] body = files.get(exchange.getRequestURI().getPath());
            if (body == null) {
                exchange.sendResponseHeaders(404, -1);
            } else {
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
            exchange.close();
        });
        mirror.start();
        try {
            String endpoint = "http://127.0.0.1:" + mirror.getAddress().getPort();
            ModelResolver resolver = new ModelResolver(properties(home, "stories260K", endpoint));
            ModelResolver.Outcome first = resolver.resolve(new ModelSource.Named("stories260K", "stories260K"));
            assertThat(first).isInstanceOf(ModelResolver.Resolved.class);
            ModelResolver.Resolved r = (ModelResolver.Resolved) first;
            assertThat(r.model()).startsWith(home.resolve("models"));
            assertThat(Files.mismatch(r.model(), TestModels.stories260K())).isEqualTo(-1);
            assertThat(Files.mismatch(r.tokenizer(), TestModels.tok512())).isEqualTo(-1);
            int fetched = requests.get();
            assertThat(fetched).isGreaterThanOrEqualTo(2);

            ModelResolver.Outcome second = resolver.resolve(new ModelSource.Named("stories260K", "stories260K"));
            assertThat(second).isEqualTo(first);
            assertThat(requests.get()).as("the second start fetches nothing").isEqualTo(fetched);
        } finally {
            mirror.stop(0);
        }
    }

    @Test
    void noNetworkMeansNoModelAndAReasonNotACrash(@TempDir Path home) {
        ModelResolver resolver = new ModelResolver(properties(home, "stories260K", "http://127.0.0.1:9"));
        ModelResolver.Outcome outcome = resolver.resolve(new ModelSource.Named("stories260K", "stories260K"));
        assertThat(outcome).isInstanceOf(ModelResolver.Unavailable.class);
        assertThat(((ModelResolver.Unavailable) outcome).reason()).contains("stories260K").contains("PAGEWARDEN_MODEL_PATH");
    }

    @Test
    void nothingConfiguredExplainsHowToAddAModel(@TempDir Path home) {
        ModelResolver.Outcome outcome = new ModelResolver(properties(home, null, null)).resolve(new ModelSource.None());
        assertThat(((ModelResolver.Unavailable) outcome).reason()).contains("PAGEWARDEN_MODEL_PATH");
    }
}
