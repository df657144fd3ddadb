package dev.pagewarden.cli.tools;

import dev.pagewarden.cli.command.Args;
import dev.pagewarden.core.model.DType;

import java.util.Locale;

/** Option parsing shared by the tool commands. */
final class CliSupport {
    private CliSupport() {
    }

    /** {@code f32}, {@code f16} or {@code q8_0} (any case). */
    static DType dtype(Args args, String option, String def) {
        String v = args.string(option, def);
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "f32" -> DType.F32;
            case "f16" -> DType.F16;
            case "q8_0" -> DType.Q8_0;
            default -> throw new Args.UsageException("--" + option + " must be f32, f16 or q8_0, got '" + v + "'");
        };
    }
}
