package dev.pagewarden.platform.ops;

import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.security.AdminToken;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** Once ready, tells a first-time operator where the platform is and how to make a first request. */
@Component
class StartupBanner {
    private static final Logger LOG = LoggerFactory.getLogger(StartupBanner.class);

    private final EngineHost host;
    private final AdminToken adminToken;
    private final Environment env;

    StartupBanner(EngineHost host, AdminToken adminToken, Environment env) {
        this.host = host;
        this.adminToken = adminToken;
        this.env = env;
    }

    @EventListener(ApplicationReadyEvent.class)
    void ready() {
        String port = env.getProperty("local.server.port", env.getProperty("server.port", "8080"));
        boolean tls = env.getProperty("server.ssl.enabled", Boolean.class, true)
                && (env.containsProperty("server.ssl.key-store") || env.containsProperty("server.ssl.bundle")
                || env.containsProperty("server.ssl.certificate"));
        String url = (tls ? "https" : "http") + "://localhost:" + port;
        String management = "http://localhost:" + env.getProperty("local.management.port",
                env.getProperty("management.server.port", port));
        String token = adminToken.generatedValue() != null ? adminToken.generatedValue() : "$PAGEWARDEN_ADMIN_TOKEN";
        String model = host.served().map(m -> m.id()).orElse(null);
        StringBuilder sb = new StringBuilder("\n\n  Pagewarden is up at ").append(url).append('\n');
        if (model == null) {
            sb.append("  No model is loaded: ").append(host.unavailableReason()).append('\n');
        } else {
            sb.append("  Model '").append(model).append("', effective context window ")
                    .append(host.served().get().contextWindow()).append(" tokens\n");
        }
        sb.append("\n  1. Create a tenant and an API key (the key is shown once):\n")
                .append("     TENANT=$(curl -s -X POST ").append(url).append("/admin/api/tenants -H \"Authorization: Bearer ")
                .append(token).append("\" -H 'Content-Type: application/json' -d '{\"name\":\"acme\"}' | sed 's/.*\"id\":\"\\([^\"]*\\)\".*/\\1/')\n")
                .append("     KEY=$(curl -s -X POST ").append(url).append("/admin/api/tenants/$TENANT/keys -H \"Authorization: Bearer ")
                .append(token).append("\" | sed 's/.*\"key\":\"\\([^\"]*\\)\".*/\\1/')\n")
                .append("  2. Ask for a completion:\n")
                .append("     curl -s ").append(url).append("/v1/completions -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' ")
                .append("-d '{\"model\":\"").append(model == null ? "MODEL" : model)
                .append("\",\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0}'\n")
                .append("  Health (management port): ").append(management).append("/actuator/health/readiness   Metrics: ")
                .append(management).append("/actuator/prometheus (Authorization: Bearer <admin or metrics token>)\n");
        LOG.info(sb.toString());
    }
}
