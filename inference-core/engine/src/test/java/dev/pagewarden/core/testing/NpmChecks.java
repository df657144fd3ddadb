package dev.pagewarden.core.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The npm folders of the independent oracles (llama.cpp, the real tokenizers and Jinja engines), kept under the
 * engine module's {@code src/test}; found from whichever module's folder Maven runs the test in.
 */
public final class NpmChecks {
    private static final List<Path> BASES = List.of(Path.of("src", "test"), Path.of("..", "engine", "src", "test"),
            Path.of("..", "inference-core", "engine", "src", "test"), Path.of("..", "..", "inference-core", "engine", "src", "test"));

    private NpmChecks() {
    }

    /** The folder {@code name} (e.g. {@code tokenizer-check}); where it should be when no module has it. */
    public static Path dir(String name) {
        for (Path base : BASES) {
            Path p = base.resolve(name).toAbsolutePath().normalize();
            if (Files.isDirectory(p)) {
                return p;
            }
        }
        return Path.of("src", "test", name).toAbsolutePath();
    }
}
