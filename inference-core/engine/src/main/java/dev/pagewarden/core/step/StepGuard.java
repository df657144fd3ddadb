package dev.pagewarden.core.step;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.GuardedPages;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.ReadCheck;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * The one door every forward step goes through. Before the backend runs, each sequence's reads are
 * checked against the pool's page metadata (owner tag, epoch, written slots); a refused sequence is
 * left out of the step entirely - nothing computed, nothing written. After the step, the writes of
 * every sequence that ran are recorded in the metadata. A backend never sees the pool, only its
 * storage and a copy of the tags of the pages it touches (for a second line of checks on its device), so it can
 * neither skip the checks nor forget the marking.
 */
public final class StepGuard {
    private final Backend backend;
    /** The pool, for the stage built on this guard. */
    private final KvPool pool;
    /** What the guard itself does with the pool: check reads, hand out storage and tags, record writes. */
    private final GuardedPages pages;
    private final FaultHooks hooks;
    private final boolean observed;

    public StepGuard(Backend backend, KvPool pool, FaultHooks hooks) {
        this.backend = backend;
        this.pool = pool;
        this.pages = pool;
        this.hooks = hooks;
        this.observed = hooks.observesSteps();
    }

    public KvPool pool() {
        return pool;
    }

    /**
     * Runs one step for {@code batch}. For each sequence that ran and wants logits, its last token's
     * logits land in {@code logits[i]}. {@code beforeWritesRecorded} is called with the index of each
     * sequence that ran, after the step and before its writes are recorded (the lineage of its reads
     * comes before the writes of the step).
     *
     * @return one verdict per sequence, index-aligned with {@code batch}
     */
    public ReadCheck[] forward(List<SequenceStep> batch, float[][] logits, IntConsumer beforeWritesRecorded) {
        int n = batch.size();
        ReadCheck[] verdicts = new ReadCheck[n];
        List<SequenceStep> runnable = new ArrayList<>(n);
        int[] index = new int[n];
        for (int i = 0; i < n; i++) {
            SequenceStep s = batch.get(i);
            verdicts[i] = pages.checkRead(s.requestId(), s.scope(), s.pageTable(), s.startPos(), s.endPos());
            if (verdicts[i].allowed()) {
                index[runnable.size()] = i;
                runnable.add(s);
            }
        }
        if (runnable.isEmpty()) {
            return verdicts;
        }
        float[][] runLogits = new float[runnable.size()][];
        for (int j = 0; j < runnable.size(); j++) {
            runLogits[j] = logits[index[j]];
        }
        // the tags are read here, on the engine's thread: a backend's device thread never takes the pool's lock
        ReadCheck[] device = backend.forward(runnable, pages.storage(), pages.tags(pagesTouched(runnable)), runLogits);
        List<SequenceStep> ran = new ArrayList<>(runnable.size());
        for (int j = 0; j < runnable.size(); j++) {
            if (device[j].allowed()) {
                ran.add(runnable.get(j));
            } else {
                verdicts[index[j]] = device[j]; // caught on the device: the kernels skipped it
            }
        }
        if (observed && !ran.isEmpty()) {
            hooks.afterStep(pages.name(), ran, pages.storage());
        }
        int pageTokens = pages.layout().pageTokens();
        for (int j = 0; j < runnable.size(); j++) {
            if (!device[j].allowed()) {
                continue;
            }
            SequenceStep s = runnable.get(j);
            beforeWritesRecorded.accept(index[j]);
            int end = Math.max(s.startPos(), Math.min(s.pageTable().size() * pageTokens, hooks.recordedWriteEnd(pages.name(), s)));
            pages.markPositionsWritten(s.requestId(), s.pageTable(), s.startPos(), end);
        }
        return verdicts;
    }

    /** The pages a step can touch: each sequence's table up to its step's last position. */
    private int[] pagesTouched(List<SequenceStep> runnable) {
        return runnable.stream()
                .flatMap(s -> s.pageTable().subList(0, Math.min(s.pageTable().size(), pages.layout().pagesFor(s.endPos()))).stream())
                .mapToInt(PageRef::page).toArray();
    }
}
