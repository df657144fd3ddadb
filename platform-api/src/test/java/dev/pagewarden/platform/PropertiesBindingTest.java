package dev.pagewarden.platform;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

import static dev.pagewarden.platform.testing.PropertiesBinding.bind;
import static org.assertj.core.api.Assertions.assertThat;

/** The defaults a first-time operator gets, bound exactly as the application binds them. */
class PropertiesBindingTest {

    @Test
    void defaultsLiveUnderTheUsersHome() {
        PagewardenProperties p = bind(Map.of());
        Path home = Path.of(System.getProperty("user.home"), ".pagewarden");
        assertThat(p.home()).isEqualTo(home);
        assertThat(p.embeddedDbDir()).isEqualTo(home.resolve("pg"));
        assertThat(p.journalDir()).isEqualTo(home.resolve("journal"));
        assertThat(p.keysDir()).isEqualTo(home.resolve("keys"));
        assertThat(p.engine().maxQueue()).isEqualTo(256);
        assertThat(p.engine().capacityPolicy()).isEqualTo("strict");
        assertThat(p.audit().journalCap().toGigabytes()).isEqualTo(2);
        assertThat(p.lab().enabled()).isFalse();
        assertThat(p.model().path()).isNull();
    }

    @Test
    void environmentStyleNamesBind() {
        PagewardenProperties p = bind(Map.of(), Map.of("PAGEWARDEN_MODEL_PATH", "/m/x.gguf", "PAGEWARDEN_HOME", "/srv/pw",
                "PAGEWARDEN_ENGINE_MAX_BATCH", "4"));
        assertThat(p.model().path()).isEqualTo(Path.of("/m/x.gguf"));
        assertThat(p.journalDir()).isEqualTo(Path.of("/srv/pw/journal"));
        assertThat(p.engine().maxBatch()).isEqualTo(4);
    }
}
