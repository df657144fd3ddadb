package dev.pagewarden.cli.tools;

import dev.pagewarden.command.Args;
import dev.pagewarden.core.model.DType;

import java.util.Locale;

/** Option parsing shared by the tool commands. */
final class CliSupport {
    private CliSupport() {
    }

    /** {@code f32}, {@code f16}, {@code bf16}, {@code q8_0}, {@code q4_0}, {@code q4_k}, {@code q5_k} or {@code q6_k} (any case). */
    static DType dtype(Args args, String option, String def) {
        return dtype(args.string(option, def), option);
    }

    /** The value {@code v} of option {@code option}, as {@link #dtype(Args, String, String)}. */
    static DType dtype(String v, String option) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "f32" -> DType.F32;
            case "f16" -> DType.F16;
            case "q8_0" -> DType.Q8_0;
            case "bf16" -> DType.BF16;
            case "q4_0" -> DType.Q4_0;
            case "q4_k" -> DType.Q4_K;
            case "q5_k" -> DType.Q5_K;
            case "q6_k" -> DType.Q6_K;
            default -> throw new Args.UsageException("--" + option
                    + " must be f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k, got '" + v + "'");
        };
    }
}
