package dev.pagewarden.platform;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The defaults a first-time operator gets, bound exactly as the application binds them. */
class PropertiesBindingTest {

    private static PagewardenProperties bind(Map<String, Object> extra) throws Exception {
        StandardEnvironment env = new StandardEnvironment();
        new YamlPropertySourceLoader().load("application", new ClassPathResource("application.yml"))
                .forEach(env.getPropertySources()::addLast);
        env.getPropertySources().addFirst(new org.springframework.core.env.MapPropertySource("test", extra));
        return Binder.get(env).bindOrCreate("pagewarden", PagewardenProperties.class);
    }

    @Test
    void defaultsLiveUnderTheUsersHome() throws Exception {
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
    void environmentStyleNamesBind() throws Exception {
        PagewardenProperties p = bind(Map.of("pagewarden.model.path", "/m/x.gguf", "pagewarden.home", "/srv/pw",
                "pagewarden.engine.max-batch", "4"));
        assertThat(p.model().path()).isEqualTo(Path.of("/m/x.gguf"));
        assertThat(p.journalDir()).isEqualTo(Path.of("/srv/pw/journal"));
        assertThat(p.engine().maxBatch()).isEqualTo(4);
    }
}
