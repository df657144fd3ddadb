package dev.pagewarden.platform;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Start-up for a first-time operator: no model is not a crash; a bad setting is refused by name. */
class StartupTest {

    @Test
    void withoutAModelThePlatformStartsAndSaysHowToAddOne(@TempDir Path home) throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(PagewardenApplication.class)
                .properties("server.port=0", "pagewarden.home=" + home, "pagewarden.admin-token=first-start-admin-token").run()) {
            String url = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
            HttpClient http = HttpClient.newHttpClient();
            String tenant = (String) Json.parse(http.send(HttpRequest.newBuilder(URI.create(url + "/admin/api/tenants"))
                    .header("Authorization", "Bearer first-start-admin-token").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"early\"}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("id");
            String key = (String) Json.parse(http.send(HttpRequest.newBuilder(URI.create(url + "/admin/api/tenants/" + tenant + "/keys"))
                    .header("Authorization", "Bearer first-start-admin-token").POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("key");

            HttpResponse<String> completion = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/completions"))
                    .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stories260K\",\"prompt\":\"hi\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(completion.statusCode()).isEqualTo(404);
            assertThat(completion.body()).contains("model_not_found").contains("PAGEWARDEN_MODEL_PATH");
            HttpResponse<String> models = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/models"))
                    .header("Authorization", "Bearer " + key).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(models.body()).contains("\"data\":[]");
            HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create(url + "/actuator/health/readiness")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).as("not ready to serve without a model").isEqualTo(503);
            HttpResponse<String> live = http.send(HttpRequest.newBuilder(URI.create(url + "/actuator/health/liveness")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(live.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aBadSettingStopsTheStartNamingTheProperty(@TempDir Path home) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(PagewardenApplication.class)
                .properties("server.port=0", "pagewarden.home=" + home, "pagewarden.engine.max-batch=0").run().close())
                .rootCause().hasMessageContaining("pagewarden.engine");
        assertThatThrownBy(() -> new SpringApplicationBuilder(PagewardenApplication.class)
                .properties("server.port=0", "pagewarden.home=" + home, "pagewarden.engine.capacity-policy=maybe").run().close())
                .hasStackTraceContaining("capacity-policy must be strict or clamp");
        assertThatThrownBy(() -> new SpringApplicationBuilder(PagewardenApplication.class)
                .properties("server.port=0", "pagewarden.home=" + home, "pagewarden.model.path=" + home.resolve("missing.bin")).run().close())
                .hasStackTraceContaining("PAGEWARDEN_MODEL_PATH");
    }
}
