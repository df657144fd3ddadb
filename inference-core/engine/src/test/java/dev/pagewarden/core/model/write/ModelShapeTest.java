package dev.pagewarden.core.model.write;

import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ModelShapeTest {

    @Test
    void presets() {
        ModelConfig s = ModelShape.parse("stories260K").config();
        assertThat(new int[] {s.dim(), s.hiddenDim(), s.nLayers(), s.nHeads(), s.nKvHeads(), s.vocabSize(), s.seqLen()})
                .containsExactly(64, 172, 5, 8, 4, 512, 512);
        assertThat(s.sharedClassifier()).isTrue();
        ModelConfig big = ModelShape.parse("110m").config();
        assertThat(big.dim()).isEqualTo(768);
        assertThat(big.parameterCount()).isBetween(100_000_000L, 120_000_000L);
        assertThat(ModelShape.parse("stories15M").config().vocabSize()).isEqualTo(32000);
        // Meta's published parameter counts of Llama 3.2 1B and Llama 3 8B
        assertThat(ModelShape.parse("1B").config().parameterCount()).isEqualTo(1_235_814_400L);
        ModelConfig eight = ModelShape.parse("8B").config();
        assertThat(eight.parameterCount()).isEqualTo(8_030_261_248L);
        assertThat(eight.sharedClassifier()).isFalse();
    }

    @Test
    void explicitForm() {
        ModelShape s = ModelShape.parse("dim=768,hidden=2048,layers=12,heads=12,kv_heads=4,vocab=32000,seq=1024");
        assertThat(s.config()).isEqualTo(new ModelConfig(768, 2048, 12, 12, 4, 32000, 1024, 1e-5f, 10000f, true));
        assertThat(ModelShape.parse(" dim=64, hidden=96, layers=1, heads=4, vocab=300, seq=8, shared=false ").config())
                .satisfies(c -> {
                    assertThat(c.nKvHeads()).isEqualTo(4);
                    assertThat(c.sharedClassifier()).isFalse();
                });
    }

    @Test
    void errorsNameTheProblem() {
        assertThatThrownBy(() -> ModelShape.parse("stories1B"))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("unknown model shape 'stories1B'")
                .hasMessageContaining("stories15M");
        assertThatThrownBy(() -> ModelShape.parse("dim=64,hidden=96,layers=1,heads=4,vocab=300"))
                .hasMessageContaining("missing seq");
        assertThatThrownBy(() -> ModelShape.parse("dim=64,hidden=96,layers=1,heads=4,vocab=300,seq=8,colour=red"))
                .hasMessageContaining("'colour=red'");
        assertThatThrownBy(() -> ModelShape.parse("dim=60,hidden=96,layers=1,heads=8,vocab=300,seq=8"))
                .hasMessageContaining("dim 60 is not a multiple of n_heads 8");
        assertThatThrownBy(() -> ModelShape.parse("dim=64,hidden=96,layers=1,heads=8,kv_heads=3,vocab=300,seq=8"))
                .hasMessageContaining("n_kv_heads");
        assertThatThrownBy(() -> ModelShape.parse("dim=6x4,hidden=96,layers=1,heads=8,vocab=300,seq=8"))
                .hasMessageContaining("dim must be an integer, got '6x4'");
        assertThatThrownBy(() -> ModelShape.parse("dim=64,dim=64,hidden=96,layers=1,heads=8,vocab=300,seq=8"))
                .hasMessageContaining("dim given twice");
    }
}
