package dev.pagewarden.platform.deploy;

import dev.pagewarden.platform.config.PagewardenProperties;
import dev.pagewarden.platform.testing.PropertiesBinding;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the platform really listens on and reads, from its own sources: application.yml (ports, actuator
 * base path, health groups, exposed endpoints), docs/platform.md's configuration tables, the environment
 * names its code reads, and Spring's own relaxed binding of environment variables.
 */
record AppSettings(int serverPort, int managementPort, String actuatorBase, Set<String> healthGroups,
                   Set<String> exposedEndpoints, List<String> documentedProperties, Set<String> documentedEnv,
                   Set<String> codeEnv) {

    private static final Pattern PLACEHOLDER_DEFAULT = Pattern.compile("\\$\\{[^:}]+:([^}]*)}");
    private static final Pattern ENV_NAME = Pattern.compile("\\bPAGEWARDEN_[A-Z0-9_]*[A-Z0-9]\\b");
    private static final Pattern BACKTICKED = Pattern.compile("`([^`]+)`");
    /** pagewarden.* bound from application.yml alone: what an environment variable must change to count as read. */
    private static final PagewardenProperties UNSET = PropertiesBinding.bind(Map.of());

    static AppSettings read(Path root) throws IOException {
        JsonNode app = Manifests.YAML.readTree(Files.readString(root.resolve("platform-api/src/main/resources/application.yml")));
        JsonNode management = app.path("management");
        String base = management.path("endpoints").path("web").path("base-path").asString("/actuator");
        Set<String> groups = new TreeSet<>();
        management.path("endpoint").path("health").path("group").propertyNames().forEach(groups::add);
        if (management.path("endpoint").path("health").path("probes").path("enabled").asBoolean(false)) {
            groups.add("liveness");
            groups.add("readiness");
        }
        Set<String> exposed = new TreeSet<>(List.of(
                management.path("endpoints").path("web").path("exposure").path("include").asString("health").split(",")));
        Set<String> documentedEnv = new TreeSet<>();
        List<String> properties = documentedProperties(Files.readString(root.resolve("docs/platform.md")), documentedEnv);
        Set<String> code = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root.resolve("platform-api/src/main"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".yml")).toList()) {
                Matcher m = ENV_NAME.matcher(Files.readString(f));
                while (m.find()) {
                    code.add(m.group());
                }
            }
        }
        return new AppSettings(port(app.path("server").path("port")), port(management.path("server").path("port")),
                base, groups, exposed, properties, documentedEnv, code);
    }

    /** {@code ${SERVER_PORT:8080}} is 8080 unless the environment says otherwise: the default is what the image runs. */
    private static int port(JsonNode node) {
        String text = node.asString();
        Matcher m = PLACEHOLDER_DEFAULT.matcher(text);
        return Integer.parseInt(m.matches() ? m.group(1) : text);
    }

    String healthPath(String group) {
        if (!healthGroups.contains(group)) {
            throw new AssertionError("application.yml has no health group '" + group + "' (it has " + healthGroups + ")");
        }
        return actuatorBase + "/health/" + group;
    }

    String prometheusPath() {
        if (!exposedEndpoints.contains("prometheus")) {
            throw new AssertionError("application.yml does not expose the prometheus endpoint: " + exposedEndpoints);
        }
        return actuatorBase + "/prometheus";
    }

    /**
     * Why the platform reads environment variable {@code name}, or empty when it does not: it changes what
     * {@code pagewarden.*} binds to (bound exactly as the application binds it), Spring maps it to a property
     * of docs/platform.md's configuration tables, it is named there, or the platform's code names it.
     */
    Optional<String> reads(String name, String value) {
        try {
            if (!PropertiesBinding.bind(Map.of(), Map.of(name, value)).equals(UNSET)) {
                return Optional.of("binds pagewarden.*");
            }
        } catch (RuntimeException e) {
            return Optional.of("binds pagewarden.* (this value is refused: " + e.getMessage() + ")");
        }
        var source = ConfigurationPropertySource.from(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, Map.of(name, value)));
        for (String property : documentedProperties) {
            if (source.getConfigurationProperty(ConfigurationPropertyName.adapt(property, '.')) != null) {
                return Optional.of("binds " + property + " (docs/platform.md)");
            }
        }
        if (documentedEnv.contains(name)) {
            return Optional.of("named in docs/platform.md");
        }
        return codeEnv.contains(name) ? Optional.of("read in platform-api's code") : Optional.empty();
    }

    /**
     * The properties of docs/platform.md's tables headed {@code | property | ...}: each first cell's names,
     * with {@code / .tokenizer} as a sibling of the name before it, {@code pagewarden.engine.*} expanded to the
     * names its meaning cell lists at the top level ({@code `backend` (`auto`: ...), `threads`}), and
     * upper-case environment names ({@code SPRING_DATASOURCE_URL}, {@code _USERNAME}) collected apart.
     */
    static List<String> documentedProperties(String markdown, Set<String> envNames) {
        List<String> out = new ArrayList<>();
        boolean inTable = false;
        for (String line : markdown.lines().toList()) {
            if (!line.startsWith("|")) {
                inTable = false;
                continue;
            }
            String[] cells = line.split("(?<!\\\\)\\|");
            if (cells.length < 3) {
                continue;
            }
            if (cells[1].strip().equals("property")) {
                inTable = true;
                continue;
            }
            if (!inTable || cells[1].strip().startsWith("---")) {
                continue;
            }
            String previous = null;
            Matcher m = BACKTICKED.matcher(cells[1]);
            while (m.find()) {
                String name = m.group(1);
                if (name.matches("[A-Z0-9_]+")) {
                    String env = name.startsWith("_") && previous != null
                            ? previous.substring(0, previous.lastIndexOf('_')) + name : name;
                    envNames.add(env);
                    previous = env;
                } else if (name.startsWith(".") && previous != null) {
                    out.add(previous.substring(0, previous.lastIndexOf('.')) + name);
                } else if (name.endsWith(".*")) {
                    String prefix = name.substring(0, name.length() - 1);
                    topLevelNames(cells[3]).forEach(child -> out.add(prefix + child));
                } else {
                    out.add(name);
                    previous = name;
                }
            }
        }
        if (out.isEmpty()) {
            throw new AssertionError("docs/platform.md has no '| property |' table");
        }
        return out;
    }

    /** Backticked names outside parentheses: {@code `a` (`x`), `b-c`} gives a and b-c. */
    private static List<String> topLevelNames(String cell) {
        List<String> names = new ArrayList<>();
        int depth = 0;
        for (int i = 0; i < cell.length(); i++) {
            char c = cell.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == '`') {
                int end = cell.indexOf('`', i + 1);
                if (end < 0) {
                    break;
                }
                String name = cell.substring(i + 1, end);
                if (depth == 0 && name.matches("[a-z][a-z0-9-]*")) {
                    names.add(name);
                }
                i = end;
            }
        }
        return names;
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isDirectory(dir.resolve("deploy")) && Files.isRegularFile(dir.resolve("mvnw")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new UncheckedIOException(new IOException("no repository root (deploy/ and mvnw) above " + Path.of("").toAbsolutePath()));
        }
        return dir;
    }
}
