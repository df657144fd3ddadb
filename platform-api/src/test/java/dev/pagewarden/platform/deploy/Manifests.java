package dev.pagewarden.platform.deploy;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.deser.BeanDeserializerBuilder;
import tools.jackson.databind.deser.ValueDeserializerModifier;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Kubernetes manifests read strictly into typed models: fabric8's for the built-in kinds, records below for
 * the Prometheus Operator's (no fabric8 model of them is published for Jackson 3). A field the model does not
 * know - a misspelt {@code readinesProbe}, a {@code replica} - fails the read with its name, as the API server
 * would refuse it: fabric8's models keep unknown fields in an "additional properties" map, so that any-setter
 * is taken away here and Jackson's unknown-property check applies.
 */
final class Manifests {

    static final YAMLMapper YAML = YAMLMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .addModule(new SimpleModule("no-additional-properties").setDeserializerModifier(new ValueDeserializerModifier() {
                @Override
                public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription.Supplier bean,
                                                             BeanDeserializerBuilder builder) {
                    builder.setAnySetter(null);
                    return builder;
                }
            }))
            .build();

    /** apiVersion/kind to the model a document of it is read into; any other kind is refused. */
    private static final Map<String, Class<?>> KINDS = Map.of(
            "v1/Service", Service.class,
            "v1/Secret", Secret.class,
            "apps/v1/StatefulSet", StatefulSet.class,
            "policy/v1/PodDisruptionBudget", PodDisruptionBudget.class,
            "monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor.class,
            "monitoring.coreos.com/v1/PrometheusRule", PrometheusRule.class);

    /** One document: where it came from ({@code # Source:} of helm template, or the file) and its model. */
    record Manifest(String source, Object model) {
    }

    private Manifests() {
    }

    /** Every document of a multi-document YAML text, each read into its kind's model. */
    static List<Manifest> read(String origin, String yaml) {
        List<Manifest> out = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---[ \\t]*$")) {
            String source = doc.lines().filter(l -> l.startsWith("# Source: ")).findFirst()
                    .map(l -> l.substring("# Source: ".length())).orElse(origin);
            JsonNode tree = YAML.readTree(doc);
            if (tree == null || tree.isMissingNode() || tree.isNull()) {
                continue;
            }
            String type = tree.path("apiVersion").asString("") + "/" + tree.path("kind").asString("");
            Class<?> model = KINDS.get(type);
            if (model == null) {
                throw new AssertionError(source + ": a kind this chart is not expected to make: " + type);
            }
            try {
                out.add(new Manifest(source, YAML.treeToValue(tree, model)));
            } catch (RuntimeException e) {
                throw new AssertionError(source + ": not a valid " + type + ": " + e.getMessage(), e);
            }
        }
        return out;
    }

    static <T> List<T> all(List<Manifest> manifests, Class<T> kind) {
        return manifests.stream().map(Manifest::model).filter(kind::isInstance).map(kind::cast).toList();
    }

    // monitoring.coreos.com/v1, the fields this chart uses (the CRDs' names and types)

    record ServiceMonitor(String apiVersion, String kind, ObjectMeta metadata, ServiceMonitorSpec spec) {
    }

    record ServiceMonitorSpec(LabelSelector selector, List<Endpoint> endpoints, NamespaceSelector namespaceSelector,
                              String jobLabel) {
    }

    record NamespaceSelector(Boolean any, List<String> matchNames) {
    }

    record Endpoint(String port, String path, String scheme, String interval, String scrapeTimeout,
                    Authorization authorization, Map<String, String> params) {
    }

    record Authorization(String type, SecretKeySelector credentials) {
    }

    record PrometheusRule(String apiVersion, String kind, ObjectMeta metadata, RuleFile spec) {
    }

    /** Prometheus' rule file, also the PrometheusRule's spec. */
    record RuleFile(List<RuleGroup> groups) {
    }

    record RuleGroup(String name, String interval, List<Rule> rules) {
    }

    record Rule(String alert, String record, String expr, @JsonProperty("for") String pending,
                Map<String, String> labels, Map<String, String> annotations) {
    }
}
