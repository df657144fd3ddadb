package dev.pagewarden.core.testing;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the real model fixtures: {@code $PAGEWARDEN_MODELS_DIR}, else {@code shared/models} beside
 * the project (the parent of the folder holding {@code mvnw}). A missing fixture fails the test when
 * {@code CI=true} and skips it, with the reason, otherwise.
 */
public final class TestModels {
    private TestModels() {
    }

    public static Path modelsDir() {
        String env = System.getenv("PAGEWARDEN_MODELS_DIR");
        // surefire passes the literal "${env...}" placeholder when the variable is unset
        if (env != null && !env.isBlank() && !env.startsWith("${")) {
            return Path.of(env).toAbsolutePath();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("mvnw"))) {
                Path parent = dir.getParent() != null ? dir.getParent() : dir;
                return parent.resolve("shared").resolve("models");
            }
        }
        return Path.of("..", "shared", "models").toAbsolutePath();
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
            String reason = "model fixture " + p + " is missing (set PAGEWARDEN_MODELS_DIR)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason);
            }
            System.out.println("skipping: " + reason);
            Assumptions.abort(reason);
        }
        return p;
    }
}
