package dev.pagewarden.core.testing;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the real-model fixtures: {@code $PAGEWARDEN_MODELS_DIR}, else {@code ../shared/models} beside
 * the checkout. Missing fixtures fail the test under CI=true and skip it (with the reason) elsewhere.
 */
public final class TestModels {
    private TestModels() {
    }

    public static Path modelsDir() {
        String env = System.getenv("PAGEWARDEN_MODELS_DIR");
        if (env != null && !env.isBlank()) {
            return Path.of(env).toAbsolutePath();
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        Path root = dir == null ? Path.of("").toAbsolutePath() : dir;
        return root.resolveSibling("shared").resolve("models");
    }

    public static Path stories260K() {
        return require("stories260K.bin");
    }

    public static Path tok512() {
        return require("tok512.bin");
    }

    private static Path require(String name) {
        Path p = modelsDir().resolve(name);
        if (!Files.isRegularFile(p)) {
            String why = "model fixture " + p + " is missing (set PAGEWARDEN_MODELS_DIR)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(why);
            }
            System.out.println("SKIPPED: " + why);
            Assumptions.abort(why);
        }
        return p;
    }
}
