package dev.pagewarden.core.engine;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.PageTags;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.ModelConfig;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Pool sizes: explicit sizes first, then a backend's free-memory figure (capped), else window multiples (the CPU). */
class KvPoolSizingTest {
    static final ModelConfig MODEL = new ModelConfig(64, 128, 2, 4, 2, 100, 256, 1e-5f, 10000f, true);
    static final KvLayout LAYOUT = KvLayout.of(MODEL, 16);
    /** 2 layers x (K, V) x 16 slots x kvDim 32 x 4 bytes. */
    static final long PAGE = 2L * 2 * 16 * 32 * 4;

    /** A backend that offers {@code suggested} bytes (0: no figure) and records what it was asked. */
    static final class Offering implements Backend {
        final long suggested;
        int askedRows = -1;
        double askedShare = -1;

        Offering(long suggested) {
            this.suggested = suggested;
        }

        @Override
        public long suggestedKvBytes(KvLayout layout, int stepRows, double share) {
            askedRows = stepRows;
            askedShare = share;
            return suggested;
        }

        @Override
        public String name() {
            return "offering";
        }

        @Override
        public ModelConfig config() {
            return MODEL;
        }

        @Override
        public KvStorage allocateKv(KvLayout layout, int pages) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ReadCheck[] forward(List<SequenceStep> batch, KvStorage storage, PageTags tags, float[][] logits) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }

    @Test
    void withoutAFigureThePoolHoldsTheWindowMultipleAsBefore() {
        assertThat(LAYOUT.pageBytes()).isEqualTo(PAGE);
        EngineConfig config = EngineConfig.builder().build();
        Offering none = new Offering(0);
        assertThat(EngineParts.pages("p", LAYOUT, none, 0, 0, 4 * 256, config, 1.0)).isEqualTo(4 * 256 / 16);
        assertThat(none.askedRows).isEqualTo(Math.max(config.prefillChunkTokens(), config.maxBatch()));
    }

    @Test
    void explicitSizesWinOverTheFigure() {
        EngineConfig config = EngineConfig.builder().build();
        Offering big = new Offering(1L << 40);
        assertThat(EngineParts.pages("p", LAYOUT, big, 10 * PAGE + 5, 0, 1024, config, 1.0)).isEqualTo(10);
        assertThat(EngineParts.pages("p", LAYOUT, big, 0, 100, 1024, config, 1.0)).isEqualTo(7);
        assertThat(big.askedShare).as("never asked").isEqualTo(-1);
    }

    @Test
    void theFigureSizesThePoolInWholePagesUpToMaxBatchTimesTheDefault() {
        EngineConfig config = EngineConfig.builder().maxBatch(8).build();
        Offering some = new Offering(37 * PAGE + PAGE / 2);
        assertThat(EngineParts.pages("p", LAYOUT, some, 0, 0, 1024, config, EngineParts.PREFILL_MEMORY_SHARE))
                .isEqualTo(37);
        assertThat(some.askedShare).isEqualTo(2.0 / 6);
        // a figure far beyond any use: 8 requests x 1024 tokens = 512 pages
        assertThat(EngineParts.pages("p", LAYOUT, new Offering(1L << 40), 0, 0, 1024, config, 1.0)).isEqualTo(512);
    }

    @Test
    void aFigureBelowOnePageIsRefusedWithTheNumbers() {
        assertThatThrownBy(() -> EngineParts.pages("decode-0", LAYOUT, new Offering(PAGE - 1), 0, 0, 1024,
                EngineConfig.builder().build(), 1.0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("decode-0").hasMessageContaining((PAGE - 1) + " bytes holds no page of " + PAGE);
    }
}
