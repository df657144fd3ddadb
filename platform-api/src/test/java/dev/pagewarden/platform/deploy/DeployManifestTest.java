package dev.pagewarden.platform.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import dev.pagewarden.platform.config.PagewardenProperties;
import dev.pagewarden.platform.deploy.Manifests.Manifest;
import dev.pagewarden.platform.deploy.Manifests.PrometheusRule;
import dev.pagewarden.platform.deploy.Manifests.RuleFile;
import dev.pagewarden.platform.deploy.Manifests.ServiceMonitor;
import dev.pagewarden.platform.testing.PropertiesBinding;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import jakarta.validation.Validation;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.convert.DurationStyle;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * deploy/ checked without a cluster or a Docker engine: the Helm chart is linted and rendered by Helm itself
 * (helm-java, Helm's Go code in-process) for its defaults and for each values file in its {@code ci/} folder,
 * every rendered manifest and deploy/k8s/pagewarden.yaml are read into typed Kubernetes models with unknown
 * fields refused, and what they say is held against the platform's own settings: the ports and health groups
 * of application.yml, the environment names it binds (Spring's relaxed binding of its properties, the
 * documented configuration table, the names its code reads), the engine node command's real options, and
 * the image the Dockerfile builds (numeric user, paths that exist after {@code package}).
 */
class DeployManifestTest {

    private static final String RELEASE = "pw";
    private static final String NAMESPACE = "serving";
    /** Secret names the renders use that are made elsewhere: by the operator, or the chart's pre-install hook. */
    private static final Map<String, Set<String>> PROVIDED_SECRETS = Map.of(
            "default", Set.of("pw-pagewarden"),
            "all-options-values", Set.of("pw-tls-platform", "pw-tls-prefill", "pw-tls-decode"),
            "external-db-values", Set.of("pagewarden-tokens", "pagewarden-db"));

    private static Path root;
    private static Path chart;
    private static AppSettings app;
    private static Dockerfile docker;
    /** values file name (without .yaml; "default" for values.yaml alone) to its rendered manifests. */
    private static final Map<String, List<Manifest>> RENDERS = new LinkedHashMap<>();

    @BeforeAll
    static void render() throws IOException {
        // helm-java's Helm is a native library; the build depends on its Linux x86-64 build (the platform's only target)
        Assumptions.assumeTrue(System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64"),
                "Helm through helm-java's linux-amd64 library needs Linux x86-64");
        root = AppSettings.repositoryRoot();
        chart = root.resolve("deploy/helm/pagewarden");
        app = AppSettings.read(root);
        docker = Dockerfile.parse(Files.readString(root.resolve("deploy/Dockerfile")));
        RENDERS.put("default", Manifests.read("default", template(null).call()));
        for (Path values : valuesFiles()) {
            String name = values.getFileName().toString().replace(".yaml", "");
            RENDERS.put(name, Manifests.read(name, template(values).call()));
        }
        assertThat(RENDERS).containsKeys("all-options-values", "external-db-values");
    }

    private static TemplateCommand template(Path values) {
        TemplateCommand t = new Helm(chart).template().withName(RELEASE).withNamespace(NAMESPACE);
        return values == null ? t : t.withValuesFile(values);
    }

    private static List<Path> valuesFiles() throws IOException {
        try (Stream<Path> files = Files.list(chart.resolve("ci"))) {
            return files.filter(p -> p.toString().endsWith("-values.yaml")).sorted().toList();
        }
    }

    // ---------------------------------------------------------------- Helm itself

    @Test
    void helmLintPassesForTheDefaultsAndEveryValuesFile(@TempDir Path tmp) throws IOException {
        assertLintClean("defaults", new Helm(chart).lint().strict().call());
        // helm-java's lint takes no values file: lint a copy of the chart whose values.yaml has the file merged in
        for (Path values : valuesFiles()) {
            Path copy = tmp.resolve(values.getFileName().toString().replace(".yaml", "")).resolve("pagewarden");
            copyChart(chart, copy);
            ObjectNode merged = (ObjectNode) Manifests.YAML.readTree(Files.readString(chart.resolve("values.yaml")));
            merge(merged, Manifests.YAML.readTree(Files.readString(values)));
            Files.writeString(copy.resolve("values.yaml"), Manifests.YAML.writeValueAsString(merged));
            assertLintClean(values.getFileName().toString(), new Helm(copy).lint().strict().call());
        }
    }

    private static void assertLintClean(String what, LintResult lint) {
        assertThat(lint.isFailed()).as("helm lint --strict (%s): %s", what, lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).as("helm lint (%s)", what)
                .allSatisfy(m -> assertThat(m).doesNotContain("[ERROR]").doesNotContain("[WARNING]"));
    }

    @Test
    void moreThanOneReplicaWithoutASharedDatabaseIsRefusedByTheChart() {
        assertThatThrownBy(() -> template(null).set("platform.replicas", 2).call())
                .hasMessageContaining("needs one shared PostgreSQL");
        assertThatThrownBy(() -> template(null).set("postgresql.host", "db").call())
                .hasMessageContaining("needs the database password");
    }

    // ---------------------------------------------------------------- strict models

    @Test
    void aMisspeltOrDuplicatedFieldIsRefusedWhereverItIs() throws IOException {
        String k8s = Files.readString(root.resolve("deploy/k8s/pagewarden.yaml"));
        assertThat(Manifests.read("k8s", k8s)).hasSize(2);
        for (String[] typo : List.of(
                new String[]{"readinessProbe:", "readinesProbe:"},                   // a container field
                new String[]{"  replicas: 1", "  replica: 1"},                        // the StatefulSet's spec
                new String[]{"fieldPath: metadata.name", "fieldpath: metadata.name"}, // deep in an env var
                new String[]{"accessModes:", "accessMode:"},                          // a claim template
                new String[]{"targetPort: http}", "targetport: http}"})) {           // a Service port
            assertThat(k8s).contains(typo[0]);
            assertThatThrownBy(() -> Manifests.read("k8s", k8s.replace(typo[0], typo[1])))
                    .as(typo[1]).hasMessageContaining(typo[1].strip().replaceAll(":.*", ""));
        }
        assertThatThrownBy(() -> Manifests.read("k8s", k8s.replace("      containers:", "      hostNetwork: true\n      hostNetwork: false\n      containers:")))
                .hasMessageContaining("hostNetwork");
        assertThatThrownBy(() -> Manifests.read("k8s", k8s.replace("kind: Service", "kind: Ingress")))
                .hasMessageContaining("v1/Ingress");

        String monitoring = template(chart.resolve("ci/all-options-values.yaml"))
                .call();
        assertThatThrownBy(() -> Manifests.read("chart", monitoring.replace("      authorization:", "      authorisation:")))
                .hasMessageContaining("authorisation");
        assertThatThrownBy(() -> Manifests.read("chart", monitoring.replaceFirst("annotations:\n( +)summary:", "anotations:\n$1summary:")))
                .hasMessageContaining("anotations");
    }

    @Test
    void anEnvironmentNameThePlatformDoesNotReadIsRefused() {
        assertThat(app.reads("PAGEWARDEN_MODEL_PATH", "/models/m.gguf")).isPresent();
        assertThat(app.reads("PAGEWARDEN_ENGINE_MAX_BATCH", "8")).isPresent();
        assertThat(app.reads("SPRING_DATASOURCE_URL", "jdbc:postgresql://db/pw")).isPresent();
        assertThat(app.reads("PAGEWARDEN_MODEL_PATHS", "/models/m.gguf")).isEmpty();
        assertThat(app.reads("PAGEWARDEN_ENGINE_MAXBATCHES", "8")).isEmpty();
        assertThat(app.reads("SPRING_DATASOURCE_URI", "jdbc:postgresql://db/pw")).isEmpty();
    }

    // ---------------------------------------------------------------- what the renders say

    @Test
    void everyRenderAndTheStaticManifestAgreeWithThePlatformsSettings() throws IOException {
        Map<String, List<Manifest>> all = new LinkedHashMap<>(RENDERS);
        all.put("deploy/k8s/pagewarden.yaml", Manifests.read("deploy/k8s/pagewarden.yaml",
                Files.readString(root.resolve("deploy/k8s/pagewarden.yaml"))));
        for (var render : all.entrySet()) {
            List<Manifest> ms = render.getValue();
            List<StatefulSet> platforms = Manifests.all(ms, StatefulSet.class).stream()
                    .filter(s -> container(s, "platform") != null).toList();
            assertThat(platforms).as(render.getKey()).hasSize(1);
            checkPlatform(render.getKey(), platforms.getFirst(), ms);
            checkSecretReferences(render.getKey(), ms);
        }
    }

    @Test
    void theDefaultsAreOnePlatformReplicaWithItsEmbeddedDatabaseAndNothingOptional() {
        List<Manifest> ms = RENDERS.get("default");
        StatefulSet platform = Manifests.all(ms, StatefulSet.class).getFirst();
        assertThat(Manifests.all(ms, StatefulSet.class)).hasSize(1);
        assertThat(platform.getSpec().getReplicas()).isEqualTo(1);
        assertThat(env(container(platform, "platform"))).doesNotContainKeys("SPRING_DATASOURCE_URL", "PAGEWARDEN_ENGINE_NODES");
        assertThat(Manifests.all(ms, ServiceMonitor.class)).isEmpty();
        assertThat(Manifests.all(ms, PrometheusRule.class)).isEmpty();
        assertThat(Manifests.all(ms, PodDisruptionBudget.class)).hasSize(1);
    }

    @Test
    void engineNodesRunTheRealNodeCommandWithTheirCertificatesAndGpus() throws Exception {
        List<Manifest> ms = RENDERS.get("all-options-values");
        StatefulSet platformSet = Manifests.all(ms, StatefulSet.class).stream().filter(s -> container(s, "platform") != null)
                .findFirst().orElseThrow();
        Container platform = container(platformSet, "platform");
        Map<String, EnvVar> platformEnv = env(platform);
        Set<String> options = nodeCommandOptions();
        List<StatefulSet> nodes = Manifests.all(ms, StatefulSet.class).stream().filter(s -> container(s, "node") != null).toList();
        assertThat(nodes).hasSize(2);
        Map<String, StatefulSet> byRole = new HashMap<>();
        String jar = platformJarInImage();
        for (StatefulSet set : nodes) {
            Container node = container(set, "node");
            List<String> args = node.getArgs();
            assertThat(args.getFirst()).isEqualTo("node");
            for (String a : args) {
                if (a.startsWith("--")) {
                    assertThat(options).as("%s: %s is not an option of the node command", set.getMetadata().getName(), a).contains(a);
                }
            }
            Map<String, String> opt = options(args);
            assertThat(opt).containsKeys("--role", "--listen", "--model", "--tls", "--name", "--advertise", "--platform");
            byRole.put(opt.get("--role"), set);
            // the launcher runs dev.pagewarden.cli.Main from the platform jar the image holds
            assertThat(node.getCommand()).contains("-Dloader.main=dev.pagewarden.cli.Main", jar,
                    "org.springframework.boot.loader.launch.PropertiesLauncher");
            assertThat(node.getCommand().getFirst()).isEqualTo(javaInImage());
            Class.forName("dev.pagewarden.cli.Main");
            // $(VAR) in args are the pod's own name and address
            Map<String, EnvVar> env = env(node);
            Matcher ref = Pattern.compile("\\$\\(([A-Z_]+)\\)").matcher(String.join(" ", args));
            while (ref.find()) {
                assertThat(env).as("args use $(%s)", ref.group(1)).containsKey(ref.group(1));
            }
            assertThat(opt.get("--name")).isEqualTo("$(POD_NAME)");
            assertThat(env.get("POD_NAME").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
            assertThat(env.get("POD_IP").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
            int port = Integer.parseInt(opt.get("--listen").substring(opt.get("--listen").lastIndexOf(':') + 1));
            assertThat(node.getPorts()).extracting(ContainerPort::getContainerPort).containsExactly(port);
            // the folder ClusterTls reads (ca.crt, NAME.crt, NAME.key) is the mounted Secret
            assertThat(secretMountedAt(set.getSpec().getTemplate().getSpec(), node, opt.get("--tls"))).isNotNull();
            assertThat(opt.get("--platform")).isEqualTo(platformEnv.get("PAGEWARDEN_ENGINE_TLS_NAME").getValue());
            assertThat(opt.get("--model")).isEqualTo(platformEnv.get("PAGEWARDEN_MODEL_PATH").getValue());
            // a GPU asked for is a GPU used: requests = limits, and the node refuses to start without one
            Quantity gpuLimit = node.getResources().getLimits().get("nvidia.com/gpu");
            assertThat(gpuLimit).as("%s GPUs", set.getMetadata().getName()).isNotNull();
            assertThat(node.getResources().getRequests().get("nvidia.com/gpu")).isEqualTo(gpuLimit);
            assertThat(opt.get("--backend")).isEqualTo("gpu");
            checkPodSecurity(set.getMetadata().getName(), set.getSpec().getTemplate().getSpec());
            // a read-only root: the JVM's temporary files and the user's home (the CUDA driver's cache) are writable
            assertThat(node.getVolumeMounts()).extracting(VolumeMount::getMountPath)
                    .contains("/tmp", docker.image().env().get("PAGEWARDEN_HOME"));
        }
        assertThat(byRole).containsOnlyKeys("prefill", "decode");

        // PAGEWARDEN_ENGINE_NODES names each role's headless Service and port
        String entries = platformEnv.get("PAGEWARDEN_ENGINE_NODES").getValue();
        Matcher e = Pattern.compile("(prefill|decode)@dns:([a-z0-9-]+)\\.([a-z0-9-]+)\\.svc\\.cluster\\.local:(\\d+)").matcher(entries);
        Set<String> roles = new TreeSet<>();
        while (e.find()) {
            roles.add(e.group(1));
            assertThat(e.group(3)).isEqualTo(NAMESPACE);
            Service svc = service(ms, e.group(2));
            assertThat(svc.getSpec().getClusterIP()).as("%s is headless", e.group(2)).isEqualTo("None");
            StatefulSet set = byRole.get(e.group(1));
            assertThat(selects(svc.getSpec().getSelector(), set.getSpec().getTemplate().getMetadata().getLabels())).isTrue();
            ServicePort sp = svc.getSpec().getPorts().stream().filter(p -> p.getPort() == Integer.parseInt(e.group(4)))
                    .findFirst().orElseThrow(() -> new AssertionError(entries + ": no such port on " + e.group(2)));
            assertThat(resolve(sp.getTargetPort(), container(set, "node"))).isEqualTo(Integer.parseInt(e.group(4)));
        }
        assertThat(roles).as(entries).containsExactly("decode", "prefill");
        assertThat(secretMountedAt(platformSet.getSpec().getTemplate().getSpec(), platform,
                platformEnv.get("PAGEWARDEN_ENGINE_TLS_DIR").getValue())).isNotNull();
    }

    @Test
    void theServiceMonitorScrapesTheMetricsPathOfEveryReplicaWithTheMetricsToken() {
        for (String render : List.of("all-options-values", "external-db-values")) {
            List<Manifest> ms = RENDERS.get(render);
            StatefulSet set = Manifests.all(ms, StatefulSet.class).stream().filter(s -> container(s, "platform") != null).findFirst().orElseThrow();
            Container platform = container(set, "platform");
            ServiceMonitor monitor = Manifests.all(ms, ServiceMonitor.class).getFirst();
            List<Service> scraped = Manifests.all(ms, Service.class).stream()
                    .filter(s -> selects(monitor.spec().selector().getMatchLabels(), s.getMetadata().getLabels())).toList();
            assertThat(scraped).as(render).hasSize(1);
            Service svc = scraped.getFirst();
            assertThat(svc.getSpec().getClusterIP()).as("one target per pod: a headless Service").isEqualTo("None");
            assertThat(selects(svc.getSpec().getSelector(), set.getSpec().getTemplate().getMetadata().getLabels())).isTrue();
            // the job label the targets get is the one the alert rules select on
            String job = svc.getMetadata().getLabels().get(monitor.spec().jobLabel());
            assertThat(job).as("%s: the Service's %s", render, monitor.spec().jobLabel()).isNotNull();
            assertThat(alertJobs()).as("jobs alerts.yml selects").containsExactly(job);
            for (Manifests.Endpoint ep : monitor.spec().endpoints()) {
                assertThat(ep.path()).isEqualTo(app.prometheusPath());
                ServicePort port = svc.getSpec().getPorts().stream().filter(p -> ep.port().equals(p.getName())).findFirst().orElseThrow();
                assertThat(resolve(port.getTargetPort(), platform)).isEqualTo(app.managementPort());
                assertThat(ep.authorization().type()).isEqualTo("Bearer");
                SecretKeySelector token = env(platform).get("PAGEWARDEN_METRICS_TOKEN").getValueFrom().getSecretKeyRef();
                assertThat(ep.authorization().credentials().getName()).isEqualTo(token.getName());
                assertThat(ep.authorization().credentials().getKey()).isEqualTo(token.getKey());
            }
        }
    }

    @Test
    void thePrometheusRuleCarriesDeployAlertsYmlAndTheReadmeNamesEveryAlert() throws IOException {
        RuleFile rules = Manifests.YAML.readValue(Files.readString(root.resolve("deploy/alerts.yml")), RuleFile.class);
        PrometheusRule rule = Manifests.all(RENDERS.get("all-options-values"), PrometheusRule.class).getFirst();
        assertThat(rule.spec()).isEqualTo(rules);
        assertThat(Files.isSameFile(chart.resolve("files/alerts.yml"), root.resolve("deploy/alerts.yml")))
                .as("the chart's files/alerts.yml is deploy/alerts.yml (a link), not a copy").isTrue();
        String readme = Files.readString(root.resolve("deploy/README.md"));
        rules.groups().stream().flatMap(g -> g.rules().stream()).map(Manifests.Rule::alert).filter(Objects::nonNull)
                .forEach(alert -> assertThat(readme).as("deploy/README.md names alert %s", alert).contains("`" + alert + "`"));
    }

    @Test
    void theReadmeDocumentsEveryValue() throws IOException {
        String readme = Files.readString(root.resolve("deploy/README.md"));
        List<String> keys = new ArrayList<>();
        leafKeys("", Manifests.YAML.readTree(Files.readString(chart.resolve("values.yaml"))), keys);
        assertThat(keys).isNotEmpty().allSatisfy(k -> assertThat(readme).as("deploy/README.md documents value %s", k).contains("`" + k + "`"));
    }

    @Test
    void theBundledDatabaseIsTheOneThePlatformConnectsTo() {
        List<Manifest> ms = RENDERS.get("all-options-values");
        Map<String, EnvVar> platform = env(container(Manifests.all(ms, StatefulSet.class).stream()
                .filter(s -> container(s, "platform") != null).findFirst().orElseThrow(), "platform"));
        Matcher url = Pattern.compile("jdbc:postgresql://([a-z0-9-]+):(\\d+)/(\\w+)").matcher(platform.get("SPRING_DATASOURCE_URL").getValue());
        assertThat(url.matches()).as(platform.get("SPRING_DATASOURCE_URL").getValue()).isTrue();
        Service svc = service(ms, url.group(1));
        StatefulSet pg = Manifests.all(ms, StatefulSet.class).stream()
                .filter(s -> selects(svc.getSpec().getSelector(), s.getSpec().getTemplate().getMetadata().getLabels()))
                .findFirst().orElseThrow();
        Container db = pg.getSpec().getTemplate().getSpec().getContainers().getFirst();
        ServicePort port = svc.getSpec().getPorts().stream().filter(p -> p.getPort() == Integer.parseInt(url.group(2))).findFirst().orElseThrow();
        assertThat(resolve(port.getTargetPort(), db)).isEqualTo(5432);
        Map<String, EnvVar> dbEnv = env(db);
        assertThat(dbEnv.get("POSTGRES_DB").getValue()).isEqualTo(url.group(3));
        assertThat(dbEnv.get("POSTGRES_USER").getValue()).isEqualTo(platform.get("SPRING_DATASOURCE_USERNAME").getValue());
        assertThat(dbEnv.get("POSTGRES_PASSWORD").getValueFrom().getSecretKeyRef())
                .isEqualTo(platform.get("SPRING_DATASOURCE_PASSWORD").getValueFrom().getSecretKeyRef());
        assertThat(pg.getSpec().getVolumeClaimTemplates()).hasSize(1);
        assertThat(pg.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
    }

    // ---------------------------------------------------------------- the image

    @Test
    void theImageRunsAsANumericUserFromPathsThatExistAfterPackage() throws IOException {
        Dockerfile.Stage image = docker.image();
        List<String> users = image.all("USER");
        assertThat(users).hasSize(1);
        assertThat(users.getFirst()).as("USER must be numeric for runAsNonRoot").matches("\\d+(:\\d+)?");
        assertThat(imageUid()).isPositive();
        // the build stage copies the whole context: what the build needs must not be in .dockerignore
        List<String> ignored = Files.readAllLines(root.resolve(".dockerignore")).stream().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        Set<String> moduleDirs = modules();
        List<String> needed = new ArrayList<>(List.of("mvnw", ".mvn/wrapper/maven-wrapper.properties", "pom.xml"));
        moduleDirs.forEach(m -> needed.add(m + "/pom.xml"));
        moduleDirs.forEach(m -> needed.add(m + "/src/main"));
        for (String path : needed) {
            if (!Files.exists(root.resolve(path))) {
                continue; // a module without main sources
            }
            // an ignored folder drops everything below it: check the path and each folder above it
            for (Path p = Path.of(path); p != null; p = p.getParent()) {
                for (String pattern : ignored) {
                    assertThat(FileSystems.getDefault().getPathMatcher("glob:" + pattern).matches(p))
                            .as(".dockerignore %s drops %s, which the build needs", pattern, path).isFalse();
                }
            }
        }
        // COPY --from=build: what the build stage made; a module's jar exists after package when its pom names it
        String workdir = docker.stage("build").all("WORKDIR").getLast();
        for (Dockerfile.Stage stage : docker.stages()) {
            for (Dockerfile.Copy copy : stage.copies()) {
                for (String source : copy.sources()) {
                    if (copy.fromStage() == null) {
                        assertThat(root.resolve(source)).as("COPY %s", source).exists();
                    } else if (source.startsWith(workdir + "/")) {
                        String rel = source.substring(workdir.length() + 1);
                        Matcher jar = Pattern.compile("([a-z0-9-]+)/target/([\\w.-]+)\\.jar").matcher(rel);
                        assertThat(jar.matches()).as("COPY --from=%s %s: a module's jar", copy.fromStage(), source).isTrue();
                        assertThat(moduleDirs).contains(jar.group(1));
                        assertThat(Files.readString(root.resolve(jar.group(1)).resolve("pom.xml")))
                                .as("%s/pom.xml builds %s.jar", jar.group(1), jar.group(2))
                                .contains("<finalName>" + jar.group(2) + "</finalName>");
                    } else {
                        // a stage's own output (jlink's runtime): made by one of its RUN lines
                        assertThat(docker.stage(copy.fromStage()).all("RUN")).as("COPY --from=%s %s", copy.fromStage(), source)
                                .anySatisfy(run -> assertThat(run).contains("--output " + source));
                    }
                }
            }
        }
        // the entry point starts the jar the image holds, on the runtime it holds, on the platform's ports
        assertThat(image.all("ENTRYPOINT").getLast()).contains("\"" + javaInImage() + "\"", "\"" + platformJarInImage() + "\"");
        assertThat(image.all("EXPOSE").getLast().split(" ")).containsExactlyInAnyOrder(
                String.valueOf(app.serverPort()), String.valueOf(app.managementPort()));
        for (String name : image.env().keySet()) {
            if (!name.equals("JAVA_TOOL_OPTIONS")) {
                assertThat(app.reads(name, image.env().get(name))).as("Dockerfile ENV %s", name).isPresent();
            }
        }
    }

    // ---------------------------------------------------------------- checks shared by every render

    private static void checkPlatform(String render, StatefulSet set, List<Manifest> ms) {
        String what = render + " " + set.getMetadata().getName();
        PodSpec pod = set.getSpec().getTemplate().getSpec();
        Container c = container(set, "platform");
        // ports: the API and the management port, as application.yml sets them
        Map<String, Integer> ports = new HashMap<>();
        c.getPorts().forEach(p -> ports.put(p.getName(), p.getContainerPort()));
        assertThat(ports).as(what).containsExactlyInAnyOrderEntriesOf(Map.of("http", app.serverPort(), "management", app.managementPort()));
        // probes: the health groups on the management port
        probe(what + " startup", c.getStartupProbe(), c, "liveness");
        probe(what + " liveness", c.getLivenessProbe(), c, "liveness");
        probe(what + " readiness", c.getReadinessProbe(), c, "readiness");
        // environment: every name one the platform reads, and the values bind and validate as the platform's
        Map<String, EnvVar> env = env(c);
        Map<String, Object> values = new LinkedHashMap<>();
        List<String> unread = new ArrayList<>();
        for (EnvVar v : env.values()) {
            String value = v.getValueFrom() == null ? v.getValue()
                    : v.getValueFrom().getFieldRef() != null ? set.getMetadata().getName() + "-0"
                    : "a-secret-of-forty-characters-0123456789";
            values.put(v.getName(), value);
            if (app.reads(v.getName(), value).isEmpty()) {
                unread.add(v.getName());
            }
        }
        assertThat(unread).as("%s: environment names the platform does not read", what).isEmpty();
        PagewardenProperties bound = PropertiesBinding.bind(Map.of(), values);
        try (var validation = Validation.buildDefaultValidatorFactory()) {
            assertThat(validation.getValidator().validate(bound)).as("%s: the environment, bound", what).isEmpty();
        }
        assertThat(bound.engine().nodeId()).as(what).isEqualTo(set.getMetadata().getName() + "-0");
        assertThat(env.get("PAGEWARDEN_NODE_ID").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
        if (!render.startsWith("deploy/")) {
            assertThat(Integer.parseInt(env.get("PAGEWARDEN_REPLICAS").getValue())).as(what).isGreaterThanOrEqualTo(set.getSpec().getReplicas());
        }
        // state: a claim per pod, mounted where the image keeps its state
        assertThat(set.getSpec().getVolumeClaimTemplates()).as(what).isNotEmpty();
        PersistentVolumeClaim state = set.getSpec().getVolumeClaimTemplates().getFirst();
        assertThat(state.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
        String home = docker.image().env().get("PAGEWARDEN_HOME");
        assertThat(c.getVolumeMounts()).as(what).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo(state.getMetadata().getName());
            assertThat(m.getMountPath()).isEqualTo(home);
        });
        for (VolumeMount m : c.getVolumeMounts()) {
            boolean declared = pod.getVolumes().stream().anyMatch(v -> v.getName().equals(m.getName()))
                    || set.getSpec().getVolumeClaimTemplates().stream().anyMatch(t -> t.getMetadata().getName().equals(m.getName()));
            assertThat(declared).as("%s: volume %s", what, m.getName()).isTrue();
        }
        if (c.getSecurityContext() != null && Boolean.TRUE.equals(c.getSecurityContext().getReadOnlyRootFilesystem())) {
            assertThat(c.getVolumeMounts()).as("%s: a read-only root needs a writable /tmp", what)
                    .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
        }
        // shutdown: the pod's grace outlasts the application's shutdown phase
        Duration phase = DurationStyle.detectAndParse(applicationYml().path("spring").path("lifecycle").path("timeout-per-shutdown-phase").asString());
        assertThat(Duration.ofSeconds(pod.getTerminationGracePeriodSeconds())).as(what).isGreaterThan(phase);
        checkPodSecurity(what, pod);
        // Services: the governing one exists; none but a headless one reaches the management port
        assertThat(service(ms, set.getSpec().getServiceName())).isNotNull();
        Map<String, String> labels = set.getSpec().getTemplate().getMetadata().getLabels();
        List<Service> toPlatform = Manifests.all(ms, Service.class).stream().filter(s -> selects(s.getSpec().getSelector(), labels)).toList();
        assertThat(toPlatform).as(what).anySatisfy(s -> assertThat(s.getSpec().getClusterIP()).isNotEqualTo("None"));
        for (Service s : toPlatform) {
            for (ServicePort p : s.getSpec().getPorts()) {
                int target = resolve(p.getTargetPort(), c);
                if (!"None".equals(s.getSpec().getClusterIP())) {
                    assertThat(target).as("%s: Service %s exposes the management port", what, s.getMetadata().getName())
                            .isEqualTo(app.serverPort());
                }
            }
        }
        for (PodDisruptionBudget pdb : Manifests.all(ms, PodDisruptionBudget.class)) {
            assertThat(selects(pdb.getSpec().getSelector().getMatchLabels(), labels)).as(what).isTrue();
        }
    }

    private static void probe(String what, Probe probe, Container c, String group) {
        assertThat(probe).as(what).isNotNull();
        assertThat(probe.getHttpGet()).as(what).isNotNull();
        assertThat(probe.getHttpGet().getPath()).as(what).isEqualTo(app.healthPath(group));
        assertThat(resolve(probe.getHttpGet().getPort(), c)).as(what).isEqualTo(app.managementPort());
    }

    /** Pods of the image run as its numeric user, never root, never escalating. */
    private static void checkPodSecurity(String what, PodSpec pod) {
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).as(what).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).as(what).isEqualTo(imageUid());
        for (Container c : pod.getContainers()) {
            if (c.getSecurityContext() != null) {
                assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).as(what).isNotEqualTo(Boolean.TRUE);
                assertThat(c.getSecurityContext().getPrivileged()).as(what).isNotEqualTo(Boolean.TRUE);
            }
        }
    }

    /** Every secretKeyRef (not optional) names a rendered Secret holding that key, or one the operator makes. */
    private static void checkSecretReferences(String render, List<Manifest> ms) {
        Map<String, Secret> secrets = new HashMap<>();
        Manifests.all(ms, Secret.class).forEach(s -> secrets.put(s.getMetadata().getName(), s));
        Set<String> provided = PROVIDED_SECRETS.getOrDefault(render, Set.of("pagewarden"));
        for (StatefulSet set : Manifests.all(ms, StatefulSet.class)) {
            PodSpec pod = set.getSpec().getTemplate().getSpec();
            for (Container c : pod.getContainers()) {
                for (EnvVar v : c.getEnv()) {
                    SecretKeySelector ref = v.getValueFrom() == null ? null : v.getValueFrom().getSecretKeyRef();
                    if (ref == null || Boolean.TRUE.equals(ref.getOptional())) {
                        continue;
                    }
                    Secret s = secrets.get(ref.getName());
                    if (s == null) {
                        assertThat(provided).as("%s: %s from Secret %s", render, v.getName(), ref.getName()).contains(ref.getName());
                    } else {
                        assertThat(s.getData()).as("%s: %s from Secret %s", render, v.getName(), ref.getName()).containsKey(ref.getKey());
                        assertThat(Base64.getDecoder().decode(s.getData().get(ref.getKey()))).hasSizeGreaterThanOrEqualTo(16);
                    }
                }
            }
            for (Volume vol : pod.getVolumes()) {
                if (vol.getSecret() != null && !secrets.containsKey(vol.getSecret().getSecretName())) {
                    assertThat(provided).as("%s: volume %s", render, vol.getName()).contains(vol.getSecret().getSecretName());
                }
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private static Container container(StatefulSet set, String name) {
        return set.getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> c.getName().equals(name)).findFirst().orElse(null);
    }

    private static Map<String, EnvVar> env(Container c) {
        Map<String, EnvVar> env = new LinkedHashMap<>();
        for (EnvVar v : c.getEnv()) {
            assertThat(env.put(v.getName(), v)).as("%s sets %s twice", c.getName(), v.getName()).isNull();
        }
        return env;
    }

    private static Service service(List<Manifest> ms, String name) {
        return Manifests.all(ms, Service.class).stream().filter(s -> s.getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no Service " + name));
    }

    private static boolean selects(Map<String, String> selector, Map<String, String> labels) {
        return selector != null && !selector.isEmpty() && labels != null && labels.entrySet().containsAll(selector.entrySet());
    }

    /** A port by number or by the container's name for it. */
    private static int resolve(IntOrString port, Container c) {
        if (port.getIntVal() != null) {
            return port.getIntVal();
        }
        return c.getPorts().stream().filter(p -> port.getStrVal().equals(p.getName())).map(ContainerPort::getContainerPort)
                .findFirst().orElseThrow(() -> new AssertionError(c.getName() + " has no port named " + port.getStrVal()));
    }

    private static Volume secretMountedAt(PodSpec pod, Container c, String path) {
        VolumeMount mount = c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(path)).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + ": nothing mounted at " + path));
        Volume v = pod.getVolumes().stream().filter(x -> x.getName().equals(mount.getName())).findFirst().orElseThrow();
        assertThat(v.getSecret()).as("%s at %s is a Secret", v.getName(), path).isNotNull();
        return v;
    }

    private static Map<String, String> options(List<String> args) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < args.size() - 1; i++) {
            if (args.get(i).startsWith("--")) {
                out.put(args.get(i), args.get(i + 1));
            }
        }
        return out;
    }

    /** The node command's options, from its own usage text. */
    private static Set<String> nodeCommandOptions() throws ReflectiveOperationException {
        var ctor = Class.forName("dev.pagewarden.cli.NodeCommand").getDeclaredConstructor();
        ctor.setAccessible(true);
        Object command = ctor.newInstance();
        var usage = command.getClass().getMethod("usage");
        usage.setAccessible(true);
        Set<String> options = new LinkedHashSet<>();
        Matcher m = Pattern.compile("--[a-z][a-z-]*").matcher((String) usage.invoke(command));
        while (m.find()) {
            options.add(m.group());
        }
        assertThat(options).contains("--role", "--listen", "--tls");
        return options;
    }

    private static long imageUid() {
        return Long.parseLong(docker.image().all("USER").getLast().split(":")[0]);
    }

    private static String platformJarInImage() {
        return docker.image().copies().stream().filter(c -> c.sources().getFirst().endsWith("/pagewarden-platform.jar"))
                .map(Dockerfile.Copy::destination).findFirst().orElseThrow(() -> new AssertionError("the image holds no platform jar"));
    }

    private static String javaInImage() {
        String jre = docker.image().copies().stream().filter(c -> "build".equals(c.fromStage()) && c.sources().getFirst().equals("/jre"))
                .map(Dockerfile.Copy::destination).findFirst().orElseThrow(() -> new AssertionError("the image holds no runtime"));
        return jre + "/bin/java";
    }

    /** The {@code job="..."} values alerts.yml's expressions select. */
    private static Set<String> alertJobs() {
        Set<String> jobs = new TreeSet<>();
        try {
            Matcher m = Pattern.compile("job=\"([^\"]+)\"").matcher(Files.readString(root.resolve("deploy/alerts.yml")));
            while (m.find()) {
                jobs.add(m.group(1));
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return jobs;
    }

    private static Set<String> modules() throws IOException {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static JsonNode applicationYml() {
        try {
            return Manifests.YAML.readTree(Files.readString(root.resolve("platform-api/src/main/resources/application.yml")));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Dotted paths of values.yaml's settings; maps handed to Kubernetes as they are count as one setting. */
    private static void leafKeys(String prefix, JsonNode node, List<String> out) {
        Set<String> opaque = Set.of("resources", "env", "labels", "annotations", "podAnnotations", "nodeSelector",
                "tolerations", "affinity");
        for (var e : node.properties()) {
            String key = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            if (e.getValue().isObject() && !e.getValue().isEmpty() && !opaque.contains(e.getKey())) {
                leafKeys(key, e.getValue(), out);
            } else {
                out.add(key);
            }
        }
    }

    private static void merge(ObjectNode into, JsonNode from) {
        for (var e : from.properties()) {
            JsonNode existing = into.get(e.getKey());
            if (existing instanceof ObjectNode o && e.getValue().isObject()) {
                merge(o, e.getValue());
            } else {
                into.set(e.getKey(), e.getValue());
            }
        }
    }

    /** A copy with links followed (files/alerts.yml), as helm package makes it. */
    private static void copyChart(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }
}
