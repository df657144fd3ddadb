package dev.pagewarden.platform;

import dev.pagewarden.platform.config.PagewardenProperties;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validation;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import static dev.pagewarden.platform.testing.PropertiesBinding.bind;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code PAGEWARDEN_ENGINE_NODES}: unset, the engine runs in the platform's process; set, it needs the pki folder
 * the platform's certificate is in, and it cannot be combined with lab mode (the lab needs the engine in process).
 */
class EngineNodesPropertyTest {

    private static Set<ConstraintViolation<PagewardenProperties>> violations(PagewardenProperties p) {
        try (var factory = Validation.buildDefaultValidatorFactory()) {
            return factory.getValidator().validate(p);
        }
    }

    @Test
    void unsetMeansTheEngineInThisProcess() {
        PagewardenProperties p = bind(Map.of());
        assertThat(p.engine().hasNodes()).isFalse();
        assertThat(p.engine().tlsName()).isEqualTo("platform");
        assertThat(violations(p)).isEmpty();
    }

    @Test
    void theEnvironmentVariablesBind() {
        PagewardenProperties p = bind(Map.of(), Map.of("PAGEWARDEN_ENGINE_NODES", "prefill@10.0.0.1:7001,decode@10.0.0.2:7002",
                "PAGEWARDEN_ENGINE_TLS_DIR", "/etc/pagewarden/pki", "PAGEWARDEN_ENGINE_TLS_NAME", "platform-2"));
        assertThat(p.engine().hasNodes()).isTrue();
        assertThat(p.engine().nodes()).isEqualTo("prefill@10.0.0.1:7001,decode@10.0.0.2:7002");
        assertThat(p.engine().tlsDir()).isEqualTo(Path.of("/etc/pagewarden/pki"));
        assertThat(p.engine().tlsName()).isEqualTo("platform-2");
        assertThat(violations(p)).isEmpty();
    }

    @Test
    void nodesWithoutATlsDirStopTheStart() {
        assertThat(violations(bind(Map.of("pagewarden.engine.nodes", "prefill@a:1,decode@b:2")))).singleElement()
                .satisfies(v -> assertThat(v.getMessage()).contains("pagewarden.engine.tls-dir")
                        .contains("PAGEWARDEN_ENGINE_TLS_DIR"));
    }

    @Test
    void nodesWithLabModeStopTheStart() {
        assertThat(violations(bind(Map.of("pagewarden.engine.nodes", "prefill@a:1,decode@b:2",
                "pagewarden.engine.tls-dir", "/pki", "pagewarden.lab.enabled", "true")))).singleElement()
                .satisfies(v -> assertThat(v.getMessage()).contains("pagewarden.lab.enabled")
                        .contains("pagewarden.engine.nodes"));
    }
}
