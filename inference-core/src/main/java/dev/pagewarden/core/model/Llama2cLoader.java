package dev.pagewarden.core.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads llama2.c checkpoints (legacy header: seven int32 then fp32 tensors) by memory-mapping the
 * file; tensors are views, nothing is copied onto the heap. Every size is checked against the file
 * length before any view is made, so a lying header yields a clear error, not an out-of-memory.
 */
public final class Llama2cLoader {
    private static final ValueLayout.OfInt I32_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final int LEGACY_HEADER_BYTES = 7 * 4;

    private Llama2cLoader() {
    }

    /** Maps {@code file} into {@code arena} and returns its weights. */
    public static LlamaWeights load(Path file, Arena arena) {
        MemorySegment all;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            all = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read model file: " + e.getMessage(), e);
        }
        if (all.byteSize() < LEGACY_HEADER_BYTES) {
            throw new ModelFormatException(file + ": truncated: " + all.byteSize() + " bytes is smaller than the llama2.c header");
        }
        int vocab = all.get(I32_LE, 20);
        ModelConfig cfg;
        try {
            cfg = new ModelConfig(all.get(I32_LE, 0), all.get(I32_LE, 4), all.get(I32_LE, 8), all.get(I32_LE, 12),
                    all.get(I32_LE, 16), Math.abs(vocab), all.get(I32_LE, 24), 1e-5f, 10000f, vocab > 0);
        } catch (ModelFormatException e) {
            throw new ModelFormatException(file + ": bad llama2.c header: " + e.getMessage(), e);
        }
        return new Reader(file, all, LEGACY_HEADER_BYTES, cfg).legacyLayout();
    }

    /** Walks the fp32 tensors in llama2.c's order, checking bounds before every view. */
    private static final class Reader {
        private final Path file;
        private final MemorySegment all;
        private final ModelConfig cfg;
        private long offset;

        Reader(Path file, MemorySegment all, long offset, ModelConfig cfg) {
            this.file = file;
            this.all = all;
            this.offset = offset;
            this.cfg = cfg;
        }

        Tensor next(String name, int rows, int cols) {
            long bytes = 4L * rows * cols;
            if (offset + bytes > all.byteSize()) {
                throw new ModelFormatException(file + ": truncated: tensor " + name + " needs bytes " + offset + ".."
                        + (offset + bytes) + " but the file has " + all.byteSize() + " bytes");
            }
            Tensor t = new Tensor(name, DType.F32, rows, cols, all.asSlice(offset, bytes));
            offset += bytes;
            return t;
        }

        Tensor[] perLayer(String name, int rows, int cols) {
            Tensor[] ts = new Tensor[cfg.nLayers()];
            for (int l = 0; l < ts.length; l++) {
                ts[l] = next(name + "." + l, rows, cols);
            }
            return ts;
        }

        LlamaWeights legacyLayout() {
            int dim = cfg.dim();
            int kv = cfg.kvDim();
            int hid = cfg.hiddenDim();
            Tensor emb = next("token_embedding", cfg.vocabSize(), dim);
            Tensor[] rmsAtt = perLayer("rms_att", 1, dim);
            Tensor[] wq = perLayer("wq", dim, dim);
            Tensor[] wk = perLayer("wk", kv, dim);
            Tensor[] wv = perLayer("wv", kv, dim);
            Tensor[] wo = perLayer("wo", dim, dim);
            Tensor[] rmsFfn = perLayer("rms_ffn", 1, dim);
            Tensor[] w1 = perLayer("w1", hid, dim);
            Tensor[] w2 = perLayer("w2", dim, hid);
            Tensor[] w3 = perLayer("w3", hid, dim);
            Tensor rmsFinal = next("rms_final", 1, dim);
            // two legacy RoPE tables (freq_cis_real, freq_cis_imag), unused: RoPE is computed
            long skip = 2L * cfg.seqLen() * (cfg.headSize() / 2) * 4;
            if (offset + skip > all.byteSize()) {
                throw new ModelFormatException(file + ": truncated: legacy RoPE tables need bytes " + offset + ".."
                        + (offset + skip) + " but the file has " + all.byteSize() + " bytes");
            }
            offset += skip;
            Tensor cls = cfg.sharedClassifier() ? emb : next("classifier", cfg.vocabSize(), dim);
            if (offset != all.byteSize()) {
                throw new ModelFormatException(file + ": " + (all.byteSize() - offset)
                        + " unexpected trailing bytes after the last tensor (header says dim " + dim + ", layers "
                        + cfg.nLayers() + ", vocab " + cfg.vocabSize() + ")");
            }
            List<LlamaWeights.Layer> layers = new ArrayList<>();
            for (int l = 0; l < cfg.nLayers(); l++) {
                layers.add(new LlamaWeights.Layer(rmsAtt[l], wq[l], wk[l], wv[l], wo[l], rmsFfn[l], w1[l], w2[l], w3[l]));
            }
            return new LlamaWeights(cfg, emb, layers, rmsFinal, cls);
        }
    }
}
