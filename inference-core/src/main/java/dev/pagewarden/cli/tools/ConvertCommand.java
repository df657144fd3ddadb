package dev.pagewarden.cli.tools;

import dev.pagewarden.cli.command.Args;
import dev.pagewarden.cli.command.Command;
import dev.pagewarden.core.model.DType;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** {@code convert}: llama2.c checkpoint + tokenizer.bin (or a GGUF file) to GGUF. */
public final class ConvertCommand implements Command {

    public ConvertCommand() {
    }

    @Override
    public String name() {
        return "convert";
    }

    @Override
    public String usage() {
        return "convert --model FILE.bin|FILE.gguf [--tokenizer FILE (required for .bin)] --out FILE.gguf "
                + "[--dtype f32|f16|bf16|q8_0|q4_0|q4_k|q5_k|q6_k]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path model = args.existingFile("model");
        Path tokenizer = args.optionalExistingFile("tokenizer");
        Path target = Path.of(args.required("out"));
        DType dtype = CliSupport.dtype(args, "dtype", "f32");
        args.rejectUnknown();
        long start = System.nanoTime();
        Converter.convert(model, tokenizer, target, dtype, ProgressBar.forStderr(err, "convert"));
        out.printf(Locale.ROOT, "wrote %s: GGUF %s, %s in %.2f s%n", target, dtype,
                ProgressBar.mb(Files.size(target)), (System.nanoTime() - start) / 1e9);
        return 0;
    }
}
