package dev.pagewarden.platform.models;

import dev.pagewarden.platform.testing.PlainHttp;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.springframework.context.ConfigurableApplicationContext;

import java.nio.file.Path;

/** A platform of its own serving one generated Qwen3 model, with a tenant key to call it. */
record QwenServer(ConfigurableApplicationContext app, PlainHttp http, String key) implements AutoCloseable {

    /** Serves {@code model} (a GGUF file or a Hugging Face folder) from {@code home}, and makes a key for {@code tenant}. */
    static QwenServer start(Path home, String adminToken, Path model, String tenant) throws Exception {
        ConfigurableApplicationContext app = StandalonePlatform.start("pagewarden.home=" + home.resolve("home"),
                "pagewarden.admin-token=" + adminToken, "pagewarden.model.path=" + model,
                "pagewarden.engine.canary-interval=0s");
        PlainHttp http = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.server.port"));
        return new QwenServer(app, http, http.newTenantKey(adminToken, tenant));
    }

    @Override
    public void close() {
        app.close();
    }
}
