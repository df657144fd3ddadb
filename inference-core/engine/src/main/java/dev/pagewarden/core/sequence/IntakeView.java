package dev.pagewarden.core.sequence;

import dev.pagewarden.core.kv.PageRef;

import java.util.List;

/** The decode intake's view of a request: the pages its transfer lands in, and which transfer that is. */
public interface IntakeView extends KvStageView {
    List<PageRef> decodePages();

    List<PageRef> takeDecodePages();

    int transferGeneration();

    /** Tokens the transfer brings: what prefill wrote (the prompt, or after a preemption prompt + tokens so far). */
    int prefillLength();
}
