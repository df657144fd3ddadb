package dev.pagewarden.platform.testing;

import dev.pagewarden.platform.PagewardenApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A platform of its own, started as an operator starts it. Every setting goes on the command line:
 * that outranks the environment (and application.yml's {@code ${SERVER_PORT:8080}}), so an exported
 * {@code PAGEWARDEN_HOME} or {@code SERVER_PORT} cannot redirect a test; builder default properties would not.
 * Ports are random unless a setting names them.
 */
public final class StandalonePlatform {
    private StandalonePlatform() {
    }

    /** {@code settings}: {@code name=value}, e.g. {@code pagewarden.home=/tmp/x}. */
    public static ConfigurableApplicationContext start(List<Class<?>> extraSources, String... settings) {
        List<String> args = new ArrayList<>();
        for (String port : new String[] {"server.port", "management.server.port"}) {
            if (Arrays.stream(settings).noneMatch(s -> s.startsWith(port + "="))) {
                args.add("--" + port + "=0");
            }
        }
        Arrays.stream(settings).map(s -> "--" + s).forEach(args::add);
        List<Class<?>> sources = new ArrayList<>(List.of(PagewardenApplication.class));
        sources.addAll(extraSources);
        return new SpringApplicationBuilder(sources.toArray(Class<?>[]::new)).run(args.toArray(String[]::new));
    }

    public static ConfigurableApplicationContext start(String... settings) {
        return start(List.of(), settings);
    }
}
