package dev.pagewarden.platform;

import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.platform.config.PagewardenProperties;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validation;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.pagewarden.platform.testing.PropertiesBinding.bind;
import static org.assertj.core.api.Assertions.assertThat;

/** Lab fault switches are a lab-mode setting: refused at start unless {@code pagewarden.lab.enabled=true}. */
class LabModePropertyTest {

    private static Set<ConstraintViolation<PagewardenProperties>> violations(PagewardenProperties p) {
        try (var factory = Validation.buildDefaultValidatorFactory()) {
            return factory.getValidator().validate(p);
        }
    }

    @Test
    void labFaultsAreRefusedOutsideLabMode() {
        for (String fault : List.of("detectors-off", "skip-capacity-check", "legacy-finished-check",
                "immediate-release-on-abort", "delay-transfer-writes=5", "drop-transfer-page", "corrupt-transfer-byte")) {
            assertThat(violations(bind(Map.of("pagewarden.lab.faults", fault)))).as(fault).singleElement()
                    .satisfies(v -> assertThat(v.getMessage()).contains("pagewarden.lab.enabled=true"));
        }
        PagewardenProperties lab = bind(Map.of("pagewarden.lab.enabled", "true", "pagewarden.lab.faults", "detectors-off"));
        assertThat(violations(lab)).isEmpty();
        assertThat(LabFaults.parse(lab.lab().faults()).hooks(null).checksOn()).isFalse();
        assertThat(violations(bind(Map.of()))).isEmpty();
        assertThat(bind(Map.of()).lab().faults()).isEmpty();
    }
}
