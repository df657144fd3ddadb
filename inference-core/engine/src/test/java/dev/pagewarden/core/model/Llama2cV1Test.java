package dev.pagewarden.core.model;

import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Writes stories260K in llama2.c's version-1 layout by hand (order as in llama2.c's export.py, spelled
 * out here rather than taken from production code) and checks the loader reads the same weights.
 */
class Llama2cV1Test {
    @TempDir
    Path dir;

    @Test
    void v1FileLoadsToTheSameWeightsAsLegacy() throws Exception {
        Path v1 = writeV1(1);
        try (LoadedModel legacy = ModelLoader.load(TestModels.stories260K(), TestModels.tok512());
             LoadedModel m = ModelLoader.load(v1, TestModels.tok512())) {
            assertThat(m.format()).isEqualTo("llama2c-v1");
            assertThat(legacy.format()).isEqualTo("llama2c");
            assertThat(m.config()).isEqualTo(legacy.config());
            for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(m.config())) {
                Tensor a = LlamaTensors.tensor(legacy.weights(), slot);
                Tensor b = LlamaTensors.tensor(m.weights(), slot);
                assertThat(b.data().mismatch(a.data())).as(slot.llama2cName()).isEqualTo(-1L);
            }
        }
    }

    @Test
    void v1ErrorsNameTheProblem() throws Exception {
        Path v2 = writeV1(2);
        assertThatThrownBy(() -> ModelLoader.load(v2, TestModels.tok512()))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("version 2");
        Path v1 = writeV1(1);
        byte[] bytes = Files.readAllBytes(v1);
        Path cut = dir.resolve("cut.bin");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length - 4));
        assertThatThrownBy(() -> ModelLoader.load(cut, TestModels.tok512()))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining(cut.toString())
                .hasMessageContaining("truncated");
        Path shortHeader = dir.resolve("short.bin");
        Files.write(shortHeader, Arrays.copyOf(bytes, 100));
        assertThatThrownBy(() -> ModelLoader.load(shortHeader, TestModels.tok512()))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("256-byte");
    }

    @Test
    void llama2cWithoutTokenizerNamesTheOption() {
        Path model = TestModels.stories260K();
        assertThatThrownBy(() -> ModelLoader.load(model, null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("--tokenizer");
    }

    private Path writeV1(int version) throws Exception {
        try (LoadedModel legacy = ModelLoader.load(TestModels.stories260K(), TestModels.tok512())) {
            LlamaWeights w = legacy.weights();
            ModelConfig c = w.config();
            List<Tensor> order = new ArrayList<>();
            w.layers().forEach(l -> order.add(l.rmsAtt()));
            w.layers().forEach(l -> order.add(l.rmsFfn()));
            order.add(w.rmsFinal());
            order.add(w.tokenEmbedding());
            w.layers().forEach(l -> order.add(l.wq()));
            w.layers().forEach(l -> order.add(l.wk()));
            w.layers().forEach(l -> order.add(l.wv()));
            w.layers().forEach(l -> order.add(l.wo()));
            w.layers().forEach(l -> order.add(l.w1()));
            w.layers().forEach(l -> order.add(l.w2()));
            w.layers().forEach(l -> order.add(l.w3()));
            long size = 256 + order.stream().mapToLong(t -> t.data().byteSize()).sum();
            ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(0x616b3432).putInt(version).putInt(c.dim()).putInt(c.hiddenDim()).putInt(c.nLayers())
                    .putInt(c.nHeads()).putInt(c.nKvHeads()).putInt(c.vocabSize()).putInt(c.seqLen())
                    .put((byte) 1);
            b.position(256);
            for (Tensor t : order) {
                b.put(t.data().asByteBuffer());
            }
            Path out = dir.resolve("v1-" + version + ".bin");
            Files.write(out, b.array());
            return out;
        }
    }
}
