package dev.pagewarden.platform;

import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.platform.testing.PlainHttp;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** Start-up for a first-time operator: no model is not a crash; a bad setting is refused by name. */
class StartupTest {
    @Test
    void withoutAModelThePlatformStartsAndSaysHowToAddOne(@TempDir Path home) throws Exception {
        try (ConfigurableApplicationContext app = StandalonePlatform.start(
                "pagewarden.home=" + home, "pagewarden.admin-token=first-start-admin-token")) {
            PlainHttp http = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.server.port"));
            String key = http.newTenantKey("first-start-admin-token", "early");

            HttpResponse<String> completion = http.send(http.post("/v1/completions", key,
                    "{\"model\":\"stories260K\",\"prompt\":\"hi\"}"));
            assertThat(completion.statusCode()).isEqualTo(404);
            assertThat(completion.body()).contains("model_not_found").contains("PAGEWARDEN_MODEL_PATH");
            assertThat(http.get("/v1/models", key).body()).contains("\"data\":[]");
            PlainHttp management = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.management.port"));
            assertThat(management.get("/actuator/health/readiness", null).statusCode()).as("not ready to serve without a model")
                    .isEqualTo(503);
            HttpResponse<String> live = management.get("/actuator/health/liveness", null);
            assertThat(live.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aBadSettingStopsTheStartNamingTheProperty(@TempDir Path home) {
        assertThatThrownBy(() -> StandalonePlatform.start("pagewarden.home=" + home, "pagewarden.engine.max-batch=0").close())
                .rootCause().hasMessageContaining("pagewarden.engine");
        assertThatThrownBy(() -> StandalonePlatform.start("pagewarden.home=" + home, "pagewarden.engine.capacity-policy=maybe").close())
                .hasStackTraceContaining("capacity-policy must be strict or clamp");
        assertThatThrownBy(() -> StandalonePlatform.start(
                "pagewarden.home=" + home, "server.port=18931", "management.server.port=18931").close())
                .hasStackTraceContaining("management.server.port (MANAGEMENT_SERVER_PORT) must differ from server.port");
        assertThatThrownBy(() -> StandalonePlatform.start("pagewarden.home=" + home, "pagewarden.model.path=" + home.resolve("missing.bin")).close())
                .hasStackTraceContaining("PAGEWARDEN_MODEL_PATH");
    }

    /** The platform carries the GPU backend; asked for it where no GPU can run, it stops and says why. */
    @Test
    void theGpuBackendWithoutAGpuStopsTheStartSayingWhy(@TempDir Path home) {
        assertThat(Backends.all()).extracting(BackendProvider::name).contains("cpu", "gpu");
        assumeFalse(Backends.all().stream().anyMatch(p -> p.name().equals("gpu") && p.available()),
                "a usable GPU is here: this checks the refusal where there is none");
        assertThatThrownBy(() -> StandalonePlatform.start("pagewarden.home=" + home, "pagewarden.model.path=" + TestModels.stories260K(),
                        "pagewarden.model.tokenizer=" + TestModels.tok512(), "pagewarden.engine.backend=gpu").close())
                .hasStackTraceContaining("backend 'gpu' is not available here").hasStackTraceContaining("CUDA");
    }
}
