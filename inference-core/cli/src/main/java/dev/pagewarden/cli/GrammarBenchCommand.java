package dev.pagewarden.cli;

import dev.pagewarden.cli.bench.GrammarBench;
import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerSpec;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Structured output's token masks over a real vocabulary: per-state mask time on demand against after warming, and
 * an unconstrained request's decode speed while a constrained one with a new schema starts. On a given GGUF model,
 * or on a random-weight Qwen3-architecture model carrying a Hugging Face tokenizer folder's vocabulary.
 */
final class GrammarBenchCommand implements Command {
    static final String SHAPE = "dim=256,hidden=512,layers=4,heads=4,kv_heads=2,vocab=512,seq=512,shared=false";

    @Override
    public String name() {
        return "grammar-bench";
    }

    @Override
    public String usage() {
        return "grammar-bench (--model FILE.gguf | --tokenizer-dir DIR [--shape key=value,...]) [--path-states N] "
                + "[--background-tokens N] [--warm-states N] [--repeats N] [--threads T] [--backend cpu|gpu|auto] [--json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.has("model") ? args.existingFile("model") : null;
        Path tokenizerDir = args.has("tokenizer-dir") ? Path.of(args.string("tokenizer-dir", null)) : null;
        String shapeText = args.string("shape", SHAPE);
        GrammarBench.Options options = new GrammarBench.Options(args.string("backend", "auto"),
                args.integer("threads", 0), args.integer("path-states", 40), args.integer("background-tokens", 200),
                args.integer("warm-states", GrammarConstraints.WARM_STATES), args.integer("repeats", 3));
        boolean json = args.flag("json");
        args.rejectUnknown();
        if ((modelPath == null) == (tokenizerDir == null)) {
            throw new Args.UsageException("give --model or --tokenizer-dir, one of them");
        }
        Path generated = null;
        if (modelPath == null) {
            TokenizerSpec spec = HfTokenizer.load(tokenizerDir);
            ModelConfig cfg = ModelShape.parse(shapeText).forArchitecture("qwen3", null).config()
                    .withVocabSize(spec.pieces().size());
            generated = Files.createTempFile("grammar-bench-", ".gguf");
            err.println("generating a random-weight Qwen3-architecture model with " + spec.pieces().size() + " tokens");
            ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 1, generated, spec,
                    ChatTemplates.fromHfFolder(tokenizerDir).source(), size -> done -> { });
            modelPath = generated;
        }
        return BenchRun.report(modelPath, null, generated, model -> GrammarBench.run(model, options, err), json, out);
    }
}
