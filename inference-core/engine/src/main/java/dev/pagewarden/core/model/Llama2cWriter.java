package dev.pagewarden.core.model;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * Writes llama2.c legacy checkpoints (fp32 only), the layout {@link Llama2cLoader} and llama2.c's
 * run.c read: seven int32 (vocab_size negated for an unshared classifier), then the tensors role by
 * role, with the two old RoPE tables after the final norm.
 */
public final class Llama2cWriter {
    private Llama2cWriter() {
    }

    /** Size of the file {@link #write} produces for {@code cfg}. */
    public static long fileSize(ModelConfig cfg) {
        long size = Llama2cLoader.LEGACY_HEADER_BYTES + Llama2cLoader.legacyRopeTableBytes(cfg);
        for (LlamaTensors.Slot slot : LlamaTensors.roleMajor(cfg, LlamaTensors.LLAMA2C_LEGACY_ORDER)) {
            size += 4 * slot.elements();
        }
        return size;
    }

    public static void write(Path out, ModelConfig cfg, Function<LlamaTensors.Slot, RowSource> source,
                             LongConsumer progress) throws IOException {
        int maxRow = Math.max(cfg.dim(), cfg.hiddenDim());
        try (ChannelSink sink = new ChannelSink(out, 4 * maxRow, progress)) {
            sink.room(Llama2cLoader.LEGACY_HEADER_BYTES);
            sink.buffer().putInt(cfg.dim()).putInt(cfg.hiddenDim()).putInt(cfg.nLayers()).putInt(cfg.nHeads())
                    .putInt(cfg.nKvHeads()).putInt(cfg.sharedClassifier() ? cfg.vocabSize() : -cfg.vocabSize())
                    .putInt(cfg.seqLen());
            for (LlamaTensors.Slot slot : LlamaTensors.roleMajor(cfg, LlamaTensors.LLAMA2C_LEGACY_ORDER)) {
                sink.f32Rows(slot.rows(), slot.cols(), source.apply(slot));
                if (slot.role() == LlamaTensors.Role.OUTPUT_NORM) {
                    writeRopeTables(sink, cfg);
                }
            }
            sink.commit();
        }
    }

    /** The cos and sin tables old run.c versions read (current ones skip them); rows are positions. */
    private static void writeRopeTables(ChannelSink sink, ModelConfig cfg) throws IOException {
        int half = cfg.headSize() / 2;
        for (boolean cos : new boolean[] {true, false}) {
            sink.f32Rows(cfg.seqLen(), half, (pos, dst) -> {
                for (int i = 0; i < half; i++) {
                    double freq = Math.pow(cfg.ropeTheta(), -(2.0 * i) / cfg.headSize());
                    dst[i] = (float) (cos ? Math.cos(pos * freq) : Math.sin(pos * freq));
                }
            });
        }
    }
}
