package dev.pagewarden.core.backend;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.ModelConfig;

import java.util.List;

/**
 * Runs whole forward steps of one model on one device. A backend owns the weights and the page
 * memory of its KV pools on that device, so no KV crosses to the host per step.
 *
 * <p>Contract (batch invariance): the logits of a sequence depend only on its own tokens and KV,
 * never on which other sequences share the step, their order, or their count.
 */
public interface Backend extends AutoCloseable {

    /** "cpu", "gpu", ... */
    String name();

    ModelConfig config();

    /** Allocates page memory for a pool; contents are unspecified (never assume zeros). */
    KvStorage allocateKv(KvLayout layout, int pages);

    /** Bytes of device memory one page needs, for capacity planning before allocation. */
    default long kvPageBytes(KvLayout layout) {
        return layout.pageBytes();
    }

    /**
     * Runs one step for a batch of sequences over the pages of {@code pool}. Before any sequence
     * reads KV, its reads are verified against the page metadata ({@link KvPool#checkRead}); a
     * sequence that fails is left out of the step entirely (nothing computed, nothing written) and
     * its verdict says why. For each sequence that ran and wants logits, writes the logits of its
     * last token into {@code logits[i]} (length vocab).
     *
     * @return one verdict per sequence, index-aligned with {@code batch}
     */
    ReadCheck[] forward(List<SequenceStep> batch, KvPool pool, float[][] logits);

    @Override
    void close();
}
