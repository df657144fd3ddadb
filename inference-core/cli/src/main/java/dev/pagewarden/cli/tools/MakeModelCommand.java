package dev.pagewarden.cli.tools;

import dev.pagewarden.core.model.write.TokenizerBinWriter;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.safetensors.SafetensorsReader;
import dev.pagewarden.core.model.safetensors.SafetensorsWriter;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerSpec;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** {@code make-model}: writes a deterministic random-weight model (see {@link ModelGenerator}). */
public final class MakeModelCommand implements Command {

    public MakeModelCommand() {
    }

    @Override
    public String name() {
        return "make-model";
    }

    @Override
    public String usage() {
        return "make-model --shape NAME|dim=..,hidden=..,layers=..,heads=..,kv_heads=..,vocab=..,seq=.. "
                + "--out FILE|DIR [--format bin|gguf|safetensors (default: from FILE's extension; safetensors writes the "
                + "Hugging Face folder DIR)] [--dtype f32|f16|bf16|q8_0|q4_0|q4_k|q5_k|q6_k|q4_k_m|q5_k_m (safetensors: f32|f16|bf16)] "
                + "[--seed N] [--tokenizer-out FILE (tokenizer.bin of the synthetic vocabulary)] "
                + "[--arch llama|mistral|qwen2|qwen3 (default llama)] [--rope-scaling llama3] "
                + "[--vocab-from DIR (a Hugging Face tokenizer folder: its tokenizer and chat template, and its vocabulary size; "
                + "a safetensors folder gets its tokenizer files and a generation_config.json)]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        String shapeText = args.required("shape");
        Path file = Path.of(args.required("out"));
        String formatText = args.string("format", file.toString().endsWith(".bin") ? "bin" : "gguf");
        // q4_k_m / q5_k_m: llama.cpp's mixes of Q4_K / Q5_K with Q6_K (GgufLlama.mixedType)
        String dtypeText = args.string("dtype", "f32").toLowerCase(Locale.ROOT);
        boolean mixed = dtypeText.equals("q4_k_m") || dtypeText.equals("q5_k_m");
        DType dtype = mixed ? (dtypeText.startsWith("q4") ? DType.Q4_K : DType.Q5_K)
                : CliSupport.dtype(dtypeText, "dtype");
        long seed = args.longValue("seed", 42);
        String tokenizerOut = args.string("tokenizer-out", null);
        String arch = args.string("arch", "llama").toLowerCase(Locale.ROOT);
        String ropeScaling = args.string("rope-scaling", null);
        String vocabFrom = args.string("vocab-from", null);
        args.rejectUnknown();
        TokenizerSpec tokenizer = null;
        String template = null;
        if (vocabFrom != null) {
            try {
                tokenizer = HfTokenizer.load(Path.of(vocabFrom));
                ChatTemplate t = ChatTemplates.fromHfFolder(Path.of(vocabFrom));
                template = t.source().equals(ChatTemplate.FALLBACK_SOURCE) ? null : t.source();
            } catch (RuntimeException e) {
                throw new Args.UsageException("--vocab-from " + vocabFrom + ": " + e.getMessage());
            }
        }

        ModelGenerator.FileFormat format = switch (formatText.toLowerCase(Locale.ROOT)) {
            case "bin" -> ModelGenerator.FileFormat.BIN;
            case "gguf" -> ModelGenerator.FileFormat.GGUF;
            case "safetensors" -> ModelGenerator.FileFormat.SAFETENSORS;
            default -> throw new Args.UsageException("--format must be bin, gguf or safetensors, got '" + formatText + "'");
        };
        if (format == ModelGenerator.FileFormat.SAFETENSORS && (mixed || !SafetensorsWriter.TYPES.contains(dtype))) {
            throw new Args.UsageException("--dtype " + dtypeText
                    + ": a safetensors folder holds f32, f16 or bf16 weights; use --format gguf for quantised models");
        }
        ModelShape shape;
        try {
            shape = ModelShape.parse(shapeText);
        } catch (ModelFormatException e) {
            throw new Args.UsageException("--shape: " + e.getMessage());
        }
        try {
            shape = shape.forArchitecture(arch, ropeScaling);
        } catch (ModelFormatException e) {
            throw new Args.UsageException("--arch " + arch + (ropeScaling == null ? "" : " --rope-scaling " + ropeScaling)
                    + ": " + e.getMessage());
        }
        if (format == ModelGenerator.FileFormat.BIN && dtype != DType.F32) {
            throw new Args.UsageException("--dtype " + dtypeText
                    + ": a llama2.c .bin checkpoint holds only f32 weights; use --format gguf");
        }
        ModelConfig c = shape.config();
        if (format == ModelGenerator.FileFormat.BIN
                && (c.architecture() != Architecture.LLAMA || c.ropeScaling() != null || c.qDim() != c.dim())) {
            throw new Args.UsageException("--arch " + arch + (ropeScaling == null ? "" : " --rope-scaling " + ropeScaling)
                    + ": a llama2.c .bin checkpoint holds plain llama models only; use --format gguf");
        }
        long start = System.nanoTime();
        ModelConfig config = tokenizer == null ? shape.config() : shape.config().withVocabSize(tokenizer.pieces().size());
        Path written = file;
        if (format == ModelGenerator.FileFormat.SAFETENSORS) {
            ModelGenerator.generateHfFolder(config, arch, dtype, seed, file, ProgressBar.forStderr(err, "make-model"));
            if (tokenizer != null) {
                ModelGenerator.copyHfTokenizer(Path.of(vocabFrom), tokenizer, file);
            }
            written = file.resolve(SafetensorsReader.SINGLE);
        } else {
            ModelGenerator.generate(config, dtype, mixed, format, seed, file, tokenizer, template,
                    ProgressBar.forStderr(err, "make-model"));
        }
        if (tokenizerOut != null) {
            TokenizerBinWriter.write(ModelGenerator.vocabulary(shape.config().vocabSize()), Path.of(tokenizerOut));
        }
        out.printf(Locale.ROOT, "wrote %s: %s %s shape %s, %d parameters, %s, %s in %.2f s%n", file, format,
                arch, shape.name(), config.parameterCount(), mixed ? dtypeText.toUpperCase(Locale.ROOT) : dtype,
                ProgressBar.mb(Files.size(written)),
                (System.nanoTime() - start) / 1e9);
        if (format == ModelGenerator.FileFormat.GGUF
                && tokenizer == null && config.vocabSize() < ModelGenerator.MIN_VOCAB_WITH_TOKENIZER) {
            err.println("note: vocab " + config.vocabSize() + " is too small for a byte-fallback "
                    + "vocabulary; the file has no tokenizer metadata");
        }
        if (format == ModelGenerator.FileFormat.SAFETENSORS && tokenizer == null) {
            err.println("note: the folder has no tokenizer (--vocab-from DIR puts a Hugging Face tokenizer in it)");
        }
        return 0;
    }
}
