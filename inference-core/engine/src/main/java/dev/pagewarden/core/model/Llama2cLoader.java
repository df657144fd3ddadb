package dev.pagewarden.core.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads llama2.c checkpoints by memory-mapping the file; tensors are views, nothing is copied onto
 * the heap. Two layouts exist: the legacy one (seven int32, then fp32 tensors and two unused RoPE
 * tables) and version 1 (a 256-byte header starting with magic "ak42", then fp32 tensors with the
 * norms first). Every size is checked against the file length before any view is made, so a lying
 * header yields a clear error, not an out-of-memory.
 */
public final class Llama2cLoader {
    private static final ValueLayout.OfInt I32_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final int LEGACY_HEADER_BYTES = 7 * 4;
    /** "ak42" read as a little-endian uint32: the first four bytes of a version-1 file. */
    public static final int V1_MAGIC = 0x616b3432;
    public static final int V1_HEADER_BYTES = 256;

    private Llama2cLoader() {
    }

    /** Maps {@code file} into {@code arena} and returns its weights, in either llama2.c layout. */
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
        return all.get(I32_LE, 0) == V1_MAGIC ? loadV1(file, all) : loadLegacy(file, all);
    }

    private static LlamaWeights loadLegacy(Path file, MemorySegment all) {
        int vocab = all.get(I32_LE, 20);
        ModelConfig cfg = config(file, all, 0, Math.abs(vocab), vocab > 0);
        Reader r = new Reader(file, all, LEGACY_HEADER_BYTES);
        Map<LlamaTensors.Slot, Tensor> tensors = new HashMap<>();
        for (LlamaTensors.Slot slot : LlamaTensors.roleMajor(cfg, LlamaTensors.LLAMA2C_LEGACY_ORDER)) {
            tensors.put(slot, r.next(slot));
            if (slot.role() == LlamaTensors.Role.OUTPUT_NORM) {
                r.skip("legacy RoPE tables", legacyRopeTableBytes(cfg));
            }
        }
        r.expectEnd(cfg);
        return LlamaTensors.assemble(cfg, tensors::get);
    }

    private static LlamaWeights loadV1(Path file, MemorySegment all) {
        if (all.byteSize() < V1_HEADER_BYTES) {
            throw new ModelFormatException(file + ": truncated: " + all.byteSize()
                    + " bytes is smaller than the 256-byte llama2.c v1 header");
        }
        int version = all.get(I32_LE, 4);
        if (version != 1) {
            throw new ModelFormatException(file + ": llama2.c \"ak42\" header version " + version
                    + " is not supported (supported: 1, fp32)");
        }
        byte shared = all.get(ValueLayout.JAVA_BYTE, 36);
        if (shared != 0 && shared != 1) {
            throw new ModelFormatException(file + ": bad llama2.c v1 header: shared_classifier flag is " + shared
                    + ", expected 0 or 1");
        }
        ModelConfig cfg = config(file, all, 8, all.get(I32_LE, 8 + 20), shared == 1);
        Reader r = new Reader(file, all, V1_HEADER_BYTES);
        Map<LlamaTensors.Slot, Tensor> tensors = new HashMap<>();
        for (LlamaTensors.Slot slot : LlamaTensors.roleMajor(cfg, LlamaTensors.LLAMA2C_V1_ORDER)) {
            tensors.put(slot, r.next(slot));
        }
        r.expectEnd(cfg);
        return LlamaTensors.assemble(cfg, tensors::get);
    }

    /** The seven int32 header fields at {@code at}: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab, seq_len. */
    private static ModelConfig config(Path file, MemorySegment all, long at, int vocab, boolean shared) {
        try {
            return new ModelConfig(all.get(I32_LE, at), all.get(I32_LE, at + 4), all.get(I32_LE, at + 8),
                    all.get(I32_LE, at + 12), all.get(I32_LE, at + 16), vocab, all.get(I32_LE, at + 24),
                    1e-5f, 10000f, shared);
        } catch (ModelFormatException e) {
            throw new ModelFormatException(file + ": bad llama2.c header: " + e.getMessage(), e);
        }
    }

    /** Two tables (cos and sin) of seq_len x head_size/2 floats that old llama2.c builds precomputed. */
    static long legacyRopeTableBytes(ModelConfig cfg) {
        return 2L * cfg.seqLen() * (cfg.headSize() / 2) * 4;
    }

    /** Walks fp32 tensors in file order, checking bounds before every view. */
    private static final class Reader {
        private final Path file;
        private final MemorySegment all;
        private long offset;

        Reader(Path file, MemorySegment all, long offset) {
            this.file = file;
            this.all = all;
            this.offset = offset;
        }

        Tensor next(LlamaTensors.Slot slot) {
            String name = slot.llama2cName();
            long bytes = 4L * slot.elements();
            require(name, bytes);
            Tensor t = new Tensor(name, DType.F32, slot.rows(), slot.cols(), all.asSlice(offset, bytes));
            offset += bytes;
            return t;
        }

        void skip(String what, long bytes) {
            require(what, bytes);
            offset += bytes;
        }

        private void require(String what, long bytes) {
            if (bytes > all.byteSize() - offset) {
                throw new ModelFormatException(file + ": truncated: " + what + " needs bytes " + offset + ".."
                        + (offset + bytes) + " but the file has " + all.byteSize() + " bytes");
            }
        }

        void expectEnd(ModelConfig cfg) {
            if (offset != all.byteSize()) {
                throw new ModelFormatException(file + ": " + (all.byteSize() - offset)
                        + " unexpected trailing bytes after the last tensor (header says dim " + cfg.dim()
                        + ", layers " + cfg.nLayers() + ", vocab " + cfg.vocabSize() + ")");
            }
        }
    }
}
