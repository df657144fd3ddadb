package dev.pagewarden.cli;

import dev.pagewarden.cli.bench.PrefixBench;
import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The prefix cache on a chat workload: time to first token on a hit against a miss, and multi-turn throughput
 * with the cache on and off. On a given model, or on one generated with random weights for {@code --shape}.
 */
final class PrefixBenchCommand implements Command {

    @Override
    public String name() {
        return "prefix-bench";
    }

    @Override
    public String usage() {
        return "prefix-bench (--model FILE [--tokenizer FILE] | --shape 110M|stories15M|key=value,...) [--window N] [--system-tokens N] "
                + "[--turn-tokens N] [--gen-tokens N] [--turns N] [--conversations N] [--repeats N] [--threads T] "
                + "[--backend cpu|gpu|auto] [--json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.has("model") ? args.existingFile("model") : null;
        Path tokPath = args.optionalExistingFile("tokenizer");
        String shapeText = args.string("shape", modelPath == null ? "110M" : null);
        int window = args.integer("window", 4096);
        PrefixBench.Options options = new PrefixBench.Options(args.string("backend", "auto"), args.integer("threads", 0),
                args.integer("system-tokens", 2000), args.integer("turn-tokens", 20), args.integer("gen-tokens", 8),
                args.integer("turns", 3), args.integer("conversations", 2), args.integer("repeats", 3));
        boolean json = args.flag("json");
        args.rejectUnknown();
        if (modelPath != null && shapeText != null) {
            throw new Args.UsageException("give --model or --shape, not both");
        }
        Path generated = null;
        if (modelPath == null) {
            ModelShape shape = ModelShape.parse(shapeText);
            var c = shape.config();
            // the shape with the window asked for: positions beyond a preset's own length need the longer RoPE table
            ModelConfig cfg = new ModelConfig(c.dim(), c.hiddenDim(), c.nLayers(), c.nHeads(), c.nKvHeads(), c.vocabSize(),
                    window, c.rmsEps(), c.ropeTheta(), c.sharedClassifier(), c.architecture(), c.headSize(), c.ropeScaling());
            generated = Files.createTempFile("prefix-bench-", ".gguf");
            err.println("generating a random-weight " + shape.name() + " model with a " + window + "-token window");
            ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 1, generated, size -> done -> { });
            modelPath = generated;
        }
        return BenchRun.report(modelPath, generated == null ? tokPath : null, generated, model -> PrefixBench.run(model, options, err), json, out);
    }
}
