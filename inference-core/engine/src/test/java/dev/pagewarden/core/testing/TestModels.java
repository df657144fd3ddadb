package dev.pagewarden.core.testing;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the real-model fixtures, which live beside the checkout and never in it. The folder is
 * {@code $PAGEWARDEN_MODELS_DIR}, else {@code shared/models} next to the folder holding {@code mvnw}.
 * A missing fixture fails the test under CI ({@code CI=true}) and skips it elsewhere, saying why.
 */
public final class TestModels {
    private TestModels() {
    }

    public static Path modelsDir() {
        String env = System.getenv("PAGEWARDEN_MODELS_DIR");
        if (env != null && !env.isBlank()) {
            return require(Path.of(env), "PAGEWARDEN_MODELS_DIR");
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve("mvnw"))) {
                Path parent = dir.getParent() != null ? dir.getParent() : dir;
                return require(parent.resolve("shared/models"), "the folder beside the checkout");
            }
        }
        return missing("no folder holding mvnw above " + Path.of("").toAbsolutePath()
                + ", and PAGEWARDEN_MODELS_DIR is unset");
    }

    /** TinyStories 260K llama2.c checkpoint. */
    public static Path stories260K() {
        return require(modelsDir().resolve("stories260K.bin"), "the models folder");
    }

    /** The 512-token vocabulary of stories260K in llama2.c tokenizer.bin format. */
    public static Path tok512() {
        return require(modelsDir().resolve("tok512.bin"), "the models folder");
    }

    private static Path require(Path path, String from) {
        return Files.exists(path) ? path : missing(path + " (from " + from + ") does not exist");
    }

    private static Path missing(String reason) {
        String message = "model fixture missing: " + reason;
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError(message);
        }
        System.out.println("SKIPPED: " + message);
        Assumptions.abort(message);
        return null; // unreachable: abort throws
    }
}
