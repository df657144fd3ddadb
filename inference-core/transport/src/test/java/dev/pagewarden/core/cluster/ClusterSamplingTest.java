package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sampling.TokenLogprobs;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every sampling control reaches the engine nodes: penalised, biased, filtered and seeded requests, requests with
 * log probabilities (the first token's too, which the prefill node samples) and requests held to a JSON schema
 * answer through a cluster exactly as the engine in one process answers them.
 */
class ClusterSamplingTest extends RealModelTest {
    @TempDir
    Path dir;

    /** A request's tokens and the log probabilities streamed with each (null entries: none). */
    private record Answer(List<Integer> tokens, List<TokenLogprobs> logprobs) {
    }

    private static List<Answer> run(InferenceEngine engine, List<GenerationRequest> requests) throws Exception {
        List<Answer> answers = new ArrayList<>();
        for (GenerationRequest r : requests) {
            List<Integer> tokens = new CopyOnWriteArrayList<>();
            List<TokenLogprobs> logprobs = new ArrayList<>();
            int[] out = engine.submit(r, new TokenListener() {
                @Override
                public void onToken(long requestId, int token) {
                    onToken(requestId, token, null);
                }

                @Override
                public void onToken(long requestId, int token, TokenLogprobs lp) {
                    tokens.add(token);
                    synchronized (logprobs) {
                        logprobs.add(lp);
                    }
                }
            }).result().get(60, TimeUnit.SECONDS).outputTokens();
            assertThat(tokens).containsExactly(java.util.Arrays.stream(out).boxed().toArray(Integer[]::new));
            answers.add(new Answer(List.copyOf(tokens), new ArrayList<>(logprobs)));
        }
        return answers;
    }

    @Test
    void penalisedSeededLogprobSchemaAndToolCallRequestsAnswerAsInOneProcess() throws Exception {
        String schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":6},"
                + "\"age\":{\"type\":\"integer\"}},\"required\":[\"name\",\"age\"]}";
        SamplingParams penalised = new SamplingParams(0.9f, 0.95f, 1234).withPenalties(0.6f, 0.4f, 1.3f)
                .withLogitBias(Map.of(5, 3f, 17, -100f)).withFilters(40, 0.02f);
        SamplingParams constrained = new SamplingParams(0.7f, 1f, 99)
                .withConstraint(new GrammarConstraints(model.tokenizer()).constraint(JsonGrammar.compile(schema)));
        // a forced tool call: fixed text around the arguments' schema, one of two names (travels as its key)
        JsonGrammar callGrammar = JsonGrammar.sequence(List.of(JsonGrammar.text("<tool_call>{\"name\":"),
                JsonGrammar.oneOf(List.of(JsonGrammar.text("\"a\""), JsonGrammar.text("\"b\""))),
                JsonGrammar.text(",\"arguments\":"), JsonGrammar.compile(schema), JsonGrammar.text("}</tool_call>")));
        SamplingParams call = new SamplingParams(0.8f, 1f, 7)
                .withConstraint(new GrammarConstraints(model.tokenizer()).constraint(callGrammar));
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int[] prompt = IsolationFixtures.prompt(10 + 13 * i, i);
            requests.add(new GenerationRequest("tenant-" + i, prompt, 20, penalised.withSeed(1234 + i)));
            requests.add(new GenerationRequest("tenant-" + i, prompt, 12, SamplingParams.greedy().withLogprobs(3)));
            requests.add(new GenerationRequest("tenant-" + i, prompt, 12,
                    new SamplingParams(1f, 1f, 5 + i).withLogprobs(0).withPenalties(0f, 1f, 1f)));
            requests.add(new GenerationRequest("tenant-" + i, prompt, 64, constrained.withSeed(99 + i)));
            requests.add(new GenerationRequest("tenant-" + i, prompt, 64, call.withSeed(7 + i)));
        }
        EngineConfig config = ClusterFixture.config();
        List<Answer> local;
        try (Engine engine = Engine.builder(model, config).build()) {
            local = run(engine, requests);
        }

        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, config, "prefill-a", 0);
             DecodeNode decode = pki.decode(model, config, "decode-a", 0);
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, decode.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            List<GenerationRequest> valid = new ArrayList<>();
            for (GenerationRequest r : requests) {
                valid.add(cluster.validate(r).request()); // nothing refused: every control can be sent
            }
            List<Answer> remote = run(cluster, valid);
            for (int i = 0; i < requests.size(); i++) {
                assertThat(remote.get(i)).as("request %d", i).isEqualTo(local.get(i));
                assertThat(remote.get(i).tokens()).as("request %d", i).isNotEmpty();
            }
            // the log probabilities came with every token, the first one's from the prefill node
            assertThat(remote.get(1).logprobs()).doesNotContainNull().allSatisfy(lp -> assertThat(lp.top()).hasSize(3));
            // the schema held: the constrained answers are its JSON
            for (int i = 3; i < requests.size(); i += 5) {
                assertThat(text(remote.get(i))).startsWith("{\"name\":\"");
                assertThat(text(remote.get(i + 1))).startsWith("<tool_call>{\"name\":\"");
            }
        }
    }

    private static String text(Answer a) {
        return model.tokenizer().decode(a.tokens().stream().mapToInt(Integer::intValue).toArray());
    }
}
