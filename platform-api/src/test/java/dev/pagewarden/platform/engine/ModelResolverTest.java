package dev.pagewarden.platform.engine;

import com.sun.net.httpserver.HttpServer;
import dev.pagewarden.core.download.FakeHub;
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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    void aHubReferenceIsFetchedIntoTheModelFolderWithItsOwnIdAndLaterStartsNeedNoHub(@TempDir Path home) throws Exception {
        byte[] gguf = Files.readAllBytes(TestModels.stories260K());
        String commit = "89abcdef0123456789abcdef0123456789abcdef";
        FakeHub hub = new FakeHub();
        hub.file("karpathy/stories-GGUF", commit, "gguf/stories260K.Q8_0.gguf", gguf, true)
                .file("Qwen/Qwen3-Tiny", "main", "config.json", "{\"hidden_size\":64}", false)
                .file("Qwen/Qwen3-Tiny", "main", "model.safetensors", gguf, true);
        String endpoint = hub.endpoint().toString();
        String fileRef = "karpathy/stories-GGUF@" + commit + ":gguf/stories260K.Q8_0.gguf";
        ModelSource fileSource = ModelSource.of(properties(home, fileRef, endpoint).model());
        assertThat(fileSource).isEqualTo(new ModelSource.Named(fileRef, "stories260K.Q8_0"));
        ModelSource repoSource = ModelSource.of(properties(home, "Qwen/Qwen3-Tiny", endpoint).model());
        assertThat(repoSource).isEqualTo(new ModelSource.Named("Qwen/Qwen3-Tiny", "Qwen3-Tiny"));
        ModelResolver.Outcome file;
        ModelResolver.Outcome repo;
        try {
            file = new ModelResolver(properties(home, fileRef, endpoint)).resolve(fileSource);
            repo = new ModelResolver(properties(home, "Qwen/Qwen3-Tiny", endpoint)).resolve(repoSource);
        } finally {
            hub.close();
        }
        assertThat(file).isEqualTo(new ModelResolver.Resolved("stories260K.Q8_0",
                home.resolve("models/karpathy/stories-GGUF/stories260K.Q8_0.gguf"), null));
        assertThat(Files.mismatch(((ModelResolver.Resolved) file).model(), TestModels.stories260K())).isEqualTo(-1);
        assertThat(repo).isEqualTo(new ModelResolver.Resolved("Qwen3-Tiny", home.resolve("models/Qwen/Qwen3-Tiny"), null));

        // The Hub is gone: both resolve from the files verified at the first start.
        assertThat(new ModelResolver(properties(home, fileRef, endpoint)).resolve(fileSource)).isEqualTo(file);
        assertThat(new ModelResolver(properties(home, "Qwen/Qwen3-Tiny", endpoint)).resolve(repoSource)).isEqualTo(repo);
    }

    @Test
    void aMalformedHubReferenceStopsTheStartNamingTheSetting(@TempDir Path home) {
        assertThatThrownBy(() -> ModelSource.of(properties(home, "org/repo:../x.gguf", null).model()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("PAGEWARDEN_MODEL_NAME")
                .hasMessageContaining("bad file '../x.gguf'");
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
