package dev.pagewarden.cli.tools;

import dev.pagewarden.core.model.write.Converter;
import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.model.DType;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** {@code convert}: llama2.c checkpoint + tokenizer.bin, a GGUF file, or a Hugging Face folder to GGUF. */
public final class ConvertCommand implements Command {

    public ConvertCommand() {
    }

    @Override
    public String name() {
        return "convert";
    }

    @Override
    public String usage() {
        return "convert (--model FILE.bin|FILE.gguf [--tokenizer FILE (required for .bin)] | --hf-dir DIR "
                + "(a Hugging Face folder: config.json, safetensors, tokenizer.json)) --out FILE.gguf "
                + "[--dtype f32|f16|bf16|q8_0|q4_0|q4_k|q5_k|q6_k]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        if (args.has("hf-dir") == args.has("model")) {
            throw new Args.UsageException("give either --model FILE or --hf-dir DIR");
        }
        Path hfDir = args.has("hf-dir") ? Path.of(args.required("hf-dir")) : null;
        if (hfDir != null && !Files.isRegularFile(hfDir.resolve("config.json"))) {
            throw new Args.UsageException("--hf-dir: " + hfDir + (Files.isDirectory(hfDir)
                    ? " is a folder without config.json (not a Hugging Face model folder)" : ": no such folder"));
        }
        if (hfDir != null && args.has("tokenizer")) {
            throw new Args.UsageException("--tokenizer: a Hugging Face folder carries its own tokenizer.json");
        }
        Path model = hfDir == null ? args.existingFile("model") : null;
        Path tokenizer = hfDir == null ? args.optionalExistingFile("tokenizer") : null;
        Path target = Path.of(args.required("out"));
        DType dtype = CliSupport.dtype(args, "dtype", "f32");
        args.rejectUnknown();
        long start = System.nanoTime();
        if (hfDir != null) {
            Converter.convertHfFolder(hfDir, target, dtype, ProgressBar.forStderr(err, "convert"));
        } else {
            Converter.convert(model, tokenizer, target, dtype, ProgressBar.forStderr(err, "convert"));
        }
        out.printf(Locale.ROOT, "wrote %s: GGUF %s, %s in %.2f s%n", target, dtype,
                ProgressBar.mb(Files.size(target)), (System.nanoTime() - start) / 1e9);
        return 0;
    }
}
