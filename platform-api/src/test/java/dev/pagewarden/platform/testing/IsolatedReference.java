package dev.pagewarden.platform.testing;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.tokenizer.Tokenizer;

import java.util.concurrent.TimeUnit;

/**
 * The isolation oracle: what a greedy request produces alone on a fresh engine. The platform's
 * answer for the same prompt must be identical, whatever else it was serving at the time.
 */
public final class IsolatedReference {
    private IsolatedReference() {
    }

    /** The text a fresh engine generates for {@code prompt} (with BOS), greedy, at most {@code maxTokens}. */
    public static String complete(String prompt, int maxTokens) throws Exception {
        LoadedModel model = RealModelTest.stories();
        Tokenizer tokenizer = new Tokenizer(model.vocabulary());
        try (Engine engine = Engine.builder(model, EngineConfig.defaults()).build()) {
            GenerationResult result = engine.submit(new GenerationRequest("reference", tokenizer.encode(prompt, true, false),
                    maxTokens, SamplingParams.greedy()), TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
            return tokenizer.decode(result.outputTokens());
        }
    }
}
