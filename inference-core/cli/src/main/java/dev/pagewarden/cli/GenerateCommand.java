package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.Utf8StreamDecoder;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/** Prints the prompt and its continuation, streamed as tokens arrive (as llama2.c's run does); statistics to stderr. */
final class GenerateCommand implements Command {

    @Override
    public String name() {
        return "generate";
    }

    @Override
    public String usage() {
        return "generate --model FILE|DIR [--tokenizer FILE] --prompt TEXT [--max-tokens N] [--temperature T] [--top-p P] "
                + "[--seed S] [--backend cpu|gpu|auto] [--threads N]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.existingModel("model");
        Path tokPath = args.optionalExistingFile("tokenizer");
        String prompt = args.required("prompt");
        int maxTokens = args.integer("max-tokens", 256);
        float temperature = args.floating("temperature", 0f);
        float topP = args.floating("top-p", 0.9f);
        long seed = args.has("seed") ? args.longValue("seed", 0) : System.nanoTime();
        String backend = args.string("backend", "auto");
        int threads = args.integer("threads", 0);
        args.rejectUnknown();
        if (prompt.isEmpty()) {
            throw new InvalidRequestException("prompt", "--prompt is empty: give the text to continue");
        }
        if (maxTokens <= 0) {
            throw new InvalidRequestException("max_tokens", "--max-tokens must be > 0, got " + maxTokens);
        }
        SamplingParams sampling = new SamplingParams(temperature, topP, seed);

        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            if (model.tokenizer() == null) {
                throw new InvalidRequestException("tokenizer", modelPath + " carries no vocabulary: pass --tokenizer FILE");
            }
            TextTokenizer tok = model.tokenizer();
            int[] promptTokens = tok.encode(prompt, tok.addBos(), false);
            EngineConfig cfg = EngineConfig.builder().backend(backend).threads(threads).build();
            try (Engine engine = Engine.builder(model, cfg).build()) {
                err.printf(Locale.ROOT, "model %s (%s, %,d parameters), backend %s, context window %d%n",
                        modelPath.getFileName(), model.format(), model.config().parameterCount(), engine.backendName(),
                        engine.contextWindow());
                int room = engine.contextWindow() - promptTokens.length;
                if (room <= 0) {
                    throw new InvalidRequestException("prompt", "the prompt is " + promptTokens.length
                            + " tokens; the context window is " + engine.contextWindow());
                }
                if (maxTokens > room) {
                    err.printf("note: --max-tokens %d lowered to %d to fit the context window%n", maxTokens, room);
                    maxTokens = room;
                }
                out.print(prompt);
                out.flush();
                Utf8StreamDecoder decoder = tok.streamDecoder();
                GenerationResult r = engine.submit(new GenerationRequest("cli", promptTokens, maxTokens, sampling), (id, t) -> {
                    out.print(decoder.accept(t));
                    out.flush();
                }).result().get();
                out.print(decoder.finish());
                out.println();
                out.flush();
                double prefillS = r.prefillNanos() / 1e9;
                double decodeS = (r.totalNanos() - r.timeToFirstNanos()) / 1e9;
                err.printf(Locale.ROOT, "prompt %d tokens, generated %d (%s), prefill %.1f tok/s, decode %.1f tok/s, "
                                + "time to first token %.1f ms%n", promptTokens.length, r.outputTokens().length,
                        r.finishReason().name().toLowerCase(Locale.ROOT), promptTokens.length / prefillS,
                        r.outputTokens().length > 1 ? (r.outputTokens().length - 1) / decodeS : 0.0,
                        r.timeToFirstNanos() / 1e6);
            }
        }
        return 0;
    }
}
