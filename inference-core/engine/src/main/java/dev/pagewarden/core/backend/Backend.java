package dev.pagewarden.core.backend;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.PageTags;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.ModelConfig;

import java.util.List;

/**
 * Runs whole forward steps of one model on one device. A backend owns the weights and the page
 * memory of its KV pools on that device, so no KV crosses to the host per step.
 *
 * <p>Contract (batch invariance): the logits of a sequence depend only on its own tokens and KV,
 * never on which other sequences share the step, their order, or their count.
 *
 * <p>A backend is called only through the step guard ({@code core.step.StepGuard}), which checks
 * every read against the page metadata before the step and records the writes after it.
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
     * Bytes of KV pages ({@link #kvPageBytes} each) a pool may take when the configuration sizes it
     * neither in bytes nor in tokens; 0 when the backend has no figure (then the pool holds a multiple of
     * the window, as configured). The GPU derives it from the device memory free after the weights, less
     * what a step of {@code stepRows} token rows needs for its activations and a safety margin; the CPU
     * gives none. {@code share}: the fraction of that usable memory this pool may take (pools allocated
     * after it on the same device share the rest).
     */
    default long suggestedKvBytes(KvLayout layout, int stepRows, double share) {
        return 0;
    }

    /**
     * Runs one step for a batch of sequences whose reads the step guard has already allowed, over
     * the pages of {@code storage}; writes each sequence's K/V (and its writer shadow) into its page
     * table and, for each sequence that wants logits, the logits of its last token into
     * {@code logits[i]} (length vocab). A backend that checks reads again on its device (against
     * {@code tags}) computes nothing from a refused sequence's context and says why in its verdict; it
     * may already have appended that sequence's own K/V to its own page, which the guard then does not
     * record as written.
     *
     * @return one verdict per sequence, index-aligned with {@code batch} ({@link ReadCheck#CLEAN} when it ran)
     */
    ReadCheck[] forward(List<SequenceStep> batch, KvStorage storage, PageTags tags, float[][] logits);

    @Override
    void close();
}
