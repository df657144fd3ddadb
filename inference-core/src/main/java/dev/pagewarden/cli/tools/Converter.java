package dev.pagewarden.cli.tools;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Converts a model (a llama2.c checkpoint with its tokenizer.bin, or a GGUF file) to GGUF in f32, f16
 * or q8_0. Tensors stream from the memory-mapped input to the output row by row.
 */
public final class Converter {
    private Converter() {
    }

    public static void convert(Path model, Path tokenizerOrNull, Path out, DType dtype,
                               LongFunction<LongConsumer> progress) throws IOException {
        try (LoadedModel in = ModelLoader.load(model, tokenizerOrNull)) {
            String name = model.getFileName().toString().replaceFirst("\\.[^.]*$", "");
            GgufWriter w = GgufLlama.writer(in.config(), in.vocabulary(), dtype, name,
                    slot -> RowSource.of(LlamaTensors.tensor(in.weights(), slot)));
            w.write(out, progress.apply(w.fileSize()));
        }
    }
}
