package dev.pagewarden.platform.testing;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Binds {@code pagewarden.*} exactly as the application does (application.yml under the given
 * properties and environment variables), but from the given environment instead of the process's:
 * an operator's exported {@code PAGEWARDEN_HOME} must not change what a test binds.
 */
public final class PropertiesBinding {
    private PropertiesBinding() {
    }

    public static PagewardenProperties bind(Map<String, Object> properties) {
        return bind(properties, Map.of());
    }

    /** {@code environment}: variables as an operator exports them ({@code PAGEWARDEN_ENGINE_MAX_BATCH=4}). */
    public static PagewardenProperties bind(Map<String, Object> properties, Map<String, Object> environment) {
        StandardEnvironment env = new StandardEnvironment();
        MutablePropertySources sources = env.getPropertySources();
        sources.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, environment));
        sources.remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
        try {
            new YamlPropertySourceLoader().load("application", new ClassPathResource("application.yml"))
                    .forEach(sources::addLast);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        sources.addFirst(new MapPropertySource("test", properties));
        return Binder.get(env).bindOrCreate("pagewarden", PagewardenProperties.class);
    }
}
