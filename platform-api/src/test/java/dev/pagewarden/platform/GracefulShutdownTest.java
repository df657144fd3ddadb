package dev.pagewarden.platform;

import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.platform.completion.Draining;
import dev.pagewarden.platform.testing.HoldingGate;
import dev.pagewarden.platform.testing.HoldingGateConfiguration;
import dev.pagewarden.platform.testing.ModelRequired;
import dev.pagewarden.platform.testing.PlainHttp;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.platform.DisconnectTest.awaitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What SIGTERM does (the context closing), on a platform of its own: admission closes at once (new
 * requests get 503 overloaded with Retry-After) while the request already running - held at a known
 * token - still finishes normally, and every lineage event is in the journal before the process ends.
 */
@ExtendWith(ModelRequired.class)
class GracefulShutdownTest {
    private static final String ADMIN = "shutdown-admin-token-0123456789";

    @Test
    void shutdownStopsAdmittingLetsTheRunningRequestFinishAndFlushesTheJournal(@TempDir Path home) throws Exception {
        ConfigurableApplicationContext app = StandalonePlatform.start(List.of(HoldingGateConfiguration.class),
                "pagewarden.home=" + home, "pagewarden.admin-token=" + ADMIN,
                "pagewarden.model.path=" + TestModels.stories260K(), "pagewarden.model.tokenizer=" + TestModels.tok512(),
                "pagewarden.engine.canary-interval=0s", "pagewarden.shutdown.grace=60s");
        String url = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
        HoldingGate gate = app.getBean(HoldingGate.class);
        Draining draining = app.getBean(Draining.class);
        JournalingLineageSink lineage = app.getBean(JournalingLineageSink.class);
        PlainHttp http = new PlainHttp(url);
        Thread closer = null;
        try {
            String key = http.newTenantKey(ADMIN, "late");

            gate.arm(2);
            CompletableFuture<HttpResponse<String>> running = http.sendAsync(http.post("/v1/completions", key,
                    "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":12,\"temperature\":0}"));
            gate.awaitHeld();
            closer = Thread.ofPlatform().start(app::close); // what SIGTERM does
            try {
                awaitUntil(draining::active, "shutdown to begin");
                HttpResponse<String> late = http.send(http.post("/v1/completions", key, "{\"model\":\"stories260K\",\"prompt\":\"hi\"}"));
                assertThat(late.statusCode()).isEqualTo(503);
                assertThat(late.body()).contains("overloaded");
                assertThat(late.headers().firstValue("Retry-After")).isPresent();
            } finally {
                gate.release();
            }
            HttpResponse<String> finished = running.get(120, TimeUnit.SECONDS);
            assertThat(finished.statusCode()).isEqualTo(200);
            assertThat(finished.body()).contains("\"finish_reason\":\"length\"");
            closer.join(TimeUnit.SECONDS.toMillis(120));
            assertThat(closer.isAlive()).isFalse();
            assertThat(lineage.journaled()).as("every lineage event is in the journal").isEqualTo(lineage.emitted());
        } finally {
            gate.release();
            if (closer == null) {
                app.close();
            }
        }
    }
}
