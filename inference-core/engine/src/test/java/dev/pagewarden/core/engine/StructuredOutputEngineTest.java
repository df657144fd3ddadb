package dev.pagewarden.core.engine;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Response formats on the real model: what it generates under a schema always parses and validates (checked by a
 * maintained JSON Schema validator), and a constrained request's output is bit-identical batched, preempted and alone.
 */
class StructuredOutputEngineTest extends RealModelTest {
    private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
    static final List<String> SCHEMAS_UNDER_TEST = List.of(
            // nested object, enum, string lengths, integer
            """
            {"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":8},
             "mood":{"enum":["happy","sad"]},"pet":{"type":"object","properties":{"kind":{"type":"string",
             "maxLength":5},"age":{"type":"integer"}},"required":["kind","age"],"additionalProperties":false}},
             "required":["name","mood","pet"],"additionalProperties":false}""",
            // an array between min and max items
            """
            {"type":"object","properties":{"tags":{"type":"array","minItems":2,"maxItems":3,
             "items":{"type":"string","minLength":1,"maxLength":4}}},"required":["tags"]}""",
            // anyOf, numbers, booleans
            """
            {"type":"object","properties":{"v":{"anyOf":[{"type":"number"},{"type":"string","maxLength":3},
             {"type":"null"}]},"w":{"type":"number"},"b":{"type":"boolean"}},"required":["v","w","b"]}""",
            // const and an optional property
            """
            {"type":"object","properties":{"k":{"const":"x"},"opt":{"type":"string","maxLength":2},
             "list":{"type":"array","maxItems":2,"items":{"type":"integer"}}},"required":["k"]}""");
    private static GrammarConstraints constraints;
    private static int[] prompt;

    @BeforeAll
    static void vocabulary() {
        constraints = new GrammarConstraints(model.tokenizer());
        prompt = model.tokenizer().encode("Once upon a time, a JSON answer:", true, false);
    }

    private static Engine engine() {
        return Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build();
    }

    static SamplingParams constrained(SamplingParams p, String schema) {
        return p.withConstraint(constraints.constraint(schema == null ? JsonGrammar.anyObject() : JsonGrammar.compile(schema)));
    }

    private static List<GenerationRequest> requests() {
        List<GenerationRequest> reqs = new ArrayList<>();
        for (int i = 0; i < SCHEMAS_UNDER_TEST.size(); i++) {
            String schema = SCHEMAS_UNDER_TEST.get(i);
            reqs.add(new GenerationRequest("greedy-" + i, prompt, 300, constrained(SamplingParams.greedy(), schema)));
            reqs.add(new GenerationRequest("sampled-" + i, prompt, 300,
                    constrained(new SamplingParams(1f, 0.95f, 77 + i).withFilters(40, 0f), schema)));
        }
        return reqs;
    }

    @Test
    void everyOutputUnderASchemaParsesAndValidates() throws Exception {
        List<GenerationRequest> reqs = requests();
        try (Engine engine = engine()) {
            for (int i = 0; i < reqs.size(); i++) {
                GenerationResult r = engine.submit(reqs.get(i), TokenListener.NONE).result().get(120, TimeUnit.SECONDS);
                String text = model.tokenizer().decode(r.outputTokens());
                assertThat(r.finishReason()).as("request %d: %s", i, text).isEqualTo(FinishReason.STOP);
                JsonNode parsed = JSON.readTree(text);
                assertThat(parsed.isObject()).as(text).isTrue();
                Schema schema = SCHEMAS.getSchema(SCHEMAS_UNDER_TEST.get(i / 2));
                assertThat(schema.validate(text, InputFormat.JSON)).as("request %d: %s", i, text).isEmpty();
            }
        }
    }

    @Test
    void jsonObjectGivesAnObjectWhenItFinishes() throws Exception {
        GenerationRequest r = new GenerationRequest("o", prompt, 200, constrained(SamplingParams.greedy(), null));
        GenerationResult res = ContinuousBatchingTest.alone(r);
        String text = model.tokenizer().decode(res.outputTokens());
        assertThat(text).startsWith("{");
        if (res.finishReason() == FinishReason.STOP) {
            assertThat(JSON.readTree(text).isObject()).as(text).isTrue();
        } else {
            assertThat(res.outputTokens()).hasSize(200); // max_tokens ran out first: the object may be cut short
        }
    }

    @Test
    void constrainedRequestsAreBitIdenticalBatchedWithOthersAndAlone() throws Exception {
        List<GenerationRequest> reqs = new ArrayList<>(ContinuousBatchingTest.workload(8, 11));
        reqs.addAll(requests());
        reqs.add(new GenerationRequest("obj", prompt, 60, constrained(new SamplingParams(0.8f, 1f, 5), null)));
        List<GenerationResult> batched = ContinuousBatchingTest.together(reqs, 180);
        for (int i = 0; i < reqs.size(); i++) {
            GenerationResult alone = ContinuousBatchingTest.alone(reqs.get(i));
            assertThat(batched.get(i).outputTokens()).as("request %d", i).isEqualTo(alone.outputTokens());
            assertThat(batched.get(i).finishReason()).as("request %d", i).isEqualTo(alone.finishReason());
        }
    }

    @Test
    void aPreemptedConstrainedRequestContinuesWhereItStood() throws Exception {
        List<GenerationRequest> reqs = new ArrayList<>(PreemptionTest.workload());
        for (int i = 0; i < 3; i++) {
            reqs.add(new GenerationRequest("json-" + i, prompt, 70,
                    constrained(new SamplingParams(0.9f, 1f, 300 + i), null)));
        }
        Set<Long> preempted = ConcurrentHashMap.newKeySet();
        List<RequestHandle> handles = new ArrayList<>();
        try (Engine e = Engine.builder(model, PreemptionTest.tight().build()).lineage(ev -> {
            if (ev.kind() == LineageEvent.Kind.PREEMPT) {
                preempted.add(ev.requestId());
            }
        }).stepped().build()) {
            for (GenerationRequest r : reqs) {
                handles.add(e.submit(r, TokenListener.NONE));
            }
            PreemptionTest.runUntilIdle(e);
        }
        boolean constrainedPreempted = false;
        for (int i = 0; i < reqs.size(); i++) {
            GenerationResult r = handles.get(i).result().get(0, TimeUnit.SECONDS);
            assertThat(r.outputTokens()).as("request %d", i).isEqualTo(PreemptionTest.alone(reqs.get(i)));
            constrainedPreempted |= i >= reqs.size() - 3 && preempted.contains(handles.get(i).id());
        }
        assertThat(constrainedPreempted).as("a constrained request was preempted").isTrue();
    }
}
