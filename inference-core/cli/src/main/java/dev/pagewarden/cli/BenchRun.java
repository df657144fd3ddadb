package dev.pagewarden.cli;

import dev.pagewarden.command.Json;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Runs one benchmark on a model file and prints its report; a model generated for the run is deleted after it. */
final class BenchRun {
    private BenchRun() {
    }

    interface Bench {
        Map<String, Object> run(LoadedModel model) throws Exception;
    }

    /** {@code generated}: the model file was made for this run (null: the user's own, left alone). */
    static int report(Path model, Path tokenizer, Path generated, Bench bench, boolean json, PrintStream out)
            throws Exception {
        Map<String, Object> report;
        try (LoadedModel loaded = ModelLoader.load(model, tokenizer)) {
            report = bench.run(loaded);
        } finally {
            if (generated != null) {
                Files.deleteIfExists(generated);
            }
        }
        if (json) {
            out.println(Json.write(report));
        } else {
            report.forEach((k, v) -> out.println(k + " " + v));
        }
        return 0;
    }
}
