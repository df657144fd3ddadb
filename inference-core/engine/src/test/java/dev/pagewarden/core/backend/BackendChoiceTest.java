package dev.pagewarden.core.backend;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code auto} passes over a backend that cannot run here or refuses the model; a backend asked for by name says why it cannot. */
class BackendChoiceTest {
    @TempDir
    static Path dir;
    static LoadedModel model;

    /** A provider with a fixed availability and a fixed answer to every model. */
    record Fake(String name, int priority, String unavailableReason, String refuses) implements BackendProvider {
        @Override
        public boolean available() {
            return unavailableReason == null;
        }

        @Override
        public String refusal(LoadedModel model) {
            return refuses;
        }

        @Override
        public Backend create(LoadedModel model, BackendOptions options) {
            throw new UnsupportedOperationException();
        }
    }

    static final Fake CPU = new Fake("cpu", 0, null, null);

    @BeforeAll
    static void model() throws Exception {
        Path file = dir.resolve("tiny.gguf");
        ModelGenerator.generate(ModelShape.parse("dim=64,hidden=128,layers=1,heads=4,vocab=300,seq=32").config(), DType.F32,
                ModelGenerator.FileFormat.GGUF, 1, file, size -> done -> { });
        model = ModelLoader.load(file, null);
    }

    @AfterAll
    static void close() {
        model.close();
    }

    @Test
    void autoFallsBackWhenTheBetterBackendRefusesTheModel() {
        Fake gpu = new Fake("gpu", 10, null, "no kernel for Q4_K weights");
        assertThat(Backends.select(List.of(gpu, CPU), "auto", model)).isSameAs(CPU);
        // without a model to judge (callers that only ask what runs here) the better backend wins
        assertThat(Backends.select(List.of(gpu, CPU), "auto", null)).isSameAs(gpu);
        assertThat(Backends.select(List.of(new Fake("gpu", 10, null, null), CPU), "auto", model).name()).isEqualTo("gpu");
    }

    @Test
    void autoPassesOverAnUnavailableBackend() {
        assertThat(Backends.select(List.of(new Fake("gpu", 10, "no libcuda.so.1", null), CPU), "auto", model)).isSameAs(CPU);
    }

    @Test
    void aBackendAskedForByNameThatRefusesTheModelFailsWithItsReason() {
        Fake gpu = new Fake("gpu", 10, null, "no kernel for Q4_K weights");
        assertThatThrownBy(() -> Backends.select(List.of(gpu, CPU), "gpu", model))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("backend 'gpu' cannot run this model: no kernel for Q4_K weights");
        assertThatThrownBy(() -> Backends.select(List.of(new Fake("gpu", 10, "no libcuda.so.1", null), CPU), "gpu", model))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no libcuda.so.1");
    }

    @Test
    void whenNothingCanRunTheModelEveryReasonIsGiven() {
        assertThatThrownBy(() -> Backends.select(List.of(new Fake("gpu", 10, "no libcuda.so.1", null),
                new Fake("cpu", 0, null, "too big")), "auto", model))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gpu unavailable: no libcuda.so.1").hasMessageContaining("cpu refuses the model: too big");
    }
}
