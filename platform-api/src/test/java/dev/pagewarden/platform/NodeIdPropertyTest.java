package dev.pagewarden.platform;

import dev.pagewarden.platform.config.PagewardenProperties;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;

import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The node id receipts name: {@code pagewarden.engine.node-id}, unset by default (the host name), checked at start. */
class NodeIdPropertyTest {

    private static PagewardenProperties bind(Map<String, Object> extra) throws Exception {
        StandardEnvironment env = new StandardEnvironment();
        new YamlPropertySourceLoader().load("application", new ClassPathResource("application.yml"))
                .forEach(env.getPropertySources()::addLast);
        env.getPropertySources().addFirst(new MapPropertySource("test", extra));
        return Binder.get(env).bindOrCreate("pagewarden", PagewardenProperties.class);
    }

    private static Set<ConstraintViolation<PagewardenProperties>> violations(PagewardenProperties p) {
        try (var factory = Validation.buildDefaultValidatorFactory()) {
            Validator validator = factory.getValidator();
            return validator.validate(p);
        }
    }

    @Test
    void nodeIdBindsAndBadValuesAreRefusedNamingTheProperty() throws Exception {
        // map entries replace whatever the ambient environment (PAGEWARDEN_ENGINE_NODE_ID) says
        assertThat(bind(Map.of("pagewarden.engine.node-id", "")).engine().nodeId()).isEmpty();
        PagewardenProperties named = bind(Map.of("pagewarden.engine.node-id", "node-7"));
        assertThat(named.engine().nodeId()).isEqualTo("node-7");
        assertThat(violations(named)).isEmpty();
        for (String bad : new String[] {"node 7", "n".repeat(129), "node\t7"}) {
            assertThat(violations(bind(Map.of("pagewarden.engine.node-id", bad))))
                    .as(bad).singleElement().satisfies(v -> assertThat(v.getPropertyPath().toString())
                            .isEqualTo("engine.nodeId"));
        }
    }
}
