package dev.pagewarden.cuda;

import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.model.ModelConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The GPU's KV pool from free memory, on made-up memory figures of an H200 (141 GiB). */
class KvSizingTest {
    static final long GIB = 1L << 30;
    static final long MIB = 1L << 20;

    @Test
    void poolsGetTheMemoryLeftAfterTwoStepsActivationsAndTheMargin() {
        ModelConfig c = ModelShape.parse("110M").config(); // dim 768, hidden 2048, 12 layers, 12 heads, vocab 32000, seq 1024
        KvLayout layout = KvLayout.of(c, 16);
        long pageKv = 12L * 2 * 16 * 768 * 4;
        assertThat(layout.pageBytes()).isEqualTo(pageKv);
        long pageCost = pageKv + 24 + 16 * 8;
        // one step of 512 rows: activations of 4 x 768 + 2 x 768 + 2 x 768 + 2 x 2048 + 32000 floats a row,
        // plan: 24 + 16 x 64 pages + 12 + 8 bytes a row, 4 KiB of flags and slack
        long scratch = 512L * ((4 * 768 + 2 * 768 + 2 * 768 + 2 * 2048 + 32000) * 4L + 24 + 16 * 64 + 12 + 8) + 4096;
        assertThat(KvSizing.scratchBytes(c, layout, 512)).isEqualTo(scratch);
        long total = 141 * GIB;
        long free = 140 * GIB;
        long margin = (long) (total * 0.04);
        KvSizing all = KvSizing.of(free, total, c, layout, 512, 1.0);
        assertThat(all.reserve()).isEqualTo(2 * scratch);
        assertThat(all.margin()).isEqualTo(margin);
        assertThat(all.pages()).isEqualTo((free - 2 * scratch - margin) / pageCost);
        assertThat(all.kvBytes()).isEqualTo(all.pages() * pageKv);
        // the prefill pool's third, then the decode pool takes what is left
        KvSizing prefill = KvSizing.of(free, total, c, layout, 512, 2.0 / 6);
        assertThat(prefill.pages()).isEqualTo((long) ((free - 2 * scratch - margin) * (2.0 / 6)) / pageCost);
        long freeAfter = free - prefill.pages() * pageCost;
        KvSizing decode = KvSizing.of(freeAfter, total, c, layout, 512, 1.0);
        assertThat(prefill.pages() + decode.pages()).isBetween(all.pages() - 1, all.pages());
        assertThat(all.describe()).contains("143360 MiB free of 144384 MiB").contains(all.pages() + " pages");
    }

    @Test
    void aSmallDeviceHasAtLeastTheMinimumMarginAndNoPagesBelowTheReserve() {
        ModelConfig c = ModelShape.parse("stories260K").config();
        KvLayout layout = KvLayout.of(c, 16);
        KvSizing s = KvSizing.of(600 * MIB, 4 * GIB, c, layout, 64, 1.0);
        assertThat(s.margin()).isEqualTo(512 * MIB);
        assertThat(s.pages()).isEqualTo((600 * MIB - s.reserve() - 512 * MIB) / (layout.pageBytes() + 24 + 128));
        assertThat(KvSizing.of(400 * MIB, 4 * GIB, c, layout, 64, 1.0).pages()).isZero();
    }
}
