package dev.pagewarden.platform;

import dev.pagewarden.platform.config.PagewardenProperties;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static dev.pagewarden.platform.testing.PropertiesBinding.bind;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The node id lineage, safety events, incidents and receipts name: {@code pagewarden.engine.node-id}
 * ({@code PAGEWARDEN_NODE_ID}), unset by default (the host name), checked at start.
 */
class NodeIdPropertyTest {

    private static Set<ConstraintViolation<PagewardenProperties>> violations(PagewardenProperties p) {
        try (var factory = Validation.buildDefaultValidatorFactory()) {
            Validator validator = factory.getValidator();
            return validator.validate(p);
        }
    }

    @Test
    void nodeIdBindsAndBadValuesAreRefusedNamingTheProperty() {
        assertThat(bind(Map.of("pagewarden.engine.node-id", "")).engine().nodeId()).isEmpty();
        PagewardenProperties named = bind(Map.of("pagewarden.engine.node-id", "node-7"));
        assertThat(named.engine().nodeId()).isEqualTo("node-7");
        assertThat(violations(named)).isEmpty();
        assertThat(named.engine().node()).isEqualTo("node-7");
        assertThat(bind(Map.of("pagewarden.engine.node-id", "")).engine().node())
                .isEqualTo(dev.pagewarden.core.receipt.ServingIdentity.hostName());
        PagewardenProperties longest = bind(Map.of("pagewarden.engine.node-id", "pod-" + "n".repeat(59)));
        assertThat(violations(longest)).isEmpty();
        for (String bad : new String[] {"node 7", "n".repeat(64), "node\t7", "node/7", "nöde", "a:b"}) {
            assertThat(violations(bind(Map.of("pagewarden.engine.node-id", bad))))
                    .as(bad).singleElement().satisfies(v -> assertThat(v.getPropertyPath().toString())
                            .isEqualTo("engine.nodeId"));
        }
    }

    @Test
    void anUnsetNodeIdTakesTheHostNameOnlyWhenItIsAValidNodeId() {
        assertThat(PagewardenProperties.Engine.nodeOr(null, "pagewarden-0")).isEqualTo("pagewarden-0");
        assertThat(PagewardenProperties.Engine.nodeOr("node-7", "bad host")).isEqualTo("node-7");
        for (String host : new String[] {"", "bad host", "h".repeat(64), "host/1"}) {
            assertThatThrownBy(() -> PagewardenProperties.Engine.nodeOr("", host)).as(host)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("PAGEWARDEN_NODE_ID")
                    .hasMessageContaining("'" + host + "'");
        }
    }
}
