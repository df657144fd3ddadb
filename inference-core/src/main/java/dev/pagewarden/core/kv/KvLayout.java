package dev.pagewarden.core.kv;

import dev.pagewarden.core.model.ModelConfig;

/**
 * Where a token's K and V rows live inside a page. A page holds {@code pageTokens} positions of
 * every layer, page-major ({@code [layer][K|V][slot][kvDim]}), so one page is one contiguous block:
 * a transfer copies a page with a single copy, and a checksum covers exactly one page.
 */
public record KvLayout(int nLayers, int kvDim, int pageTokens) {

    public KvLayout {
        if (nLayers < 1 || kvDim < 1 || pageTokens < 1) {
            throw new IllegalArgumentException("bad KV layout: layers " + nLayers + ", kvDim " + kvDim + ", pageTokens " + pageTokens);
        }
    }

    public static KvLayout of(ModelConfig cfg, int pageTokens) {
        return new KvLayout(cfg.nLayers(), cfg.kvDim(), pageTokens);
    }

    /** Floats in one page. */
    public long pageFloats() {
        return (long) nLayers * 2 * pageTokens * kvDim;
    }

    public long pageBytes() {
        return pageFloats() * Float.BYTES;
    }

    /** Float index, within a page, of the K (kv=0) or V (kv=1) row of {@code slot} in {@code layer}. */
    public long rowOffset(int layer, int kv, int slot) {
        return (((long) layer * 2 + kv) * pageTokens + slot) * kvDim;
    }

    /** Pages needed for {@code tokens} positions. */
    public int pagesFor(long tokens) {
        return (int) ((tokens + pageTokens - 1) / pageTokens);
    }
}
