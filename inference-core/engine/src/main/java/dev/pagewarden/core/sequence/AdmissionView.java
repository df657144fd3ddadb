package dev.pagewarden.core.sequence;

import dev.pagewarden.core.kv.PageRef;

import java.util.List;

/** Admission's view of a request: its decode reservation, given and taken back, or its refusal. */
public interface AdmissionView extends SequenceView {
    /** The decode pages reserved for it, reserved at {@code nowNanos}. */
    void decodePages(List<PageRef> pages, long nowNanos);

    /** Hands the decode pages to whoever now answers for them, so nobody frees them twice. */
    List<PageRef> takeDecodePages();

    /** Order of first admission; set once (a re-queued request keeps its place). */
    void admissionOrder(long order);

    long admissionOrder();

    /** Tokens its (re-)prefill writes: the prompt, and after a preemption the tokens generated so far but the last. */
    int prefillLength();

    int preemptions();

    /** Refuses the request before any page was reserved for it. */
    void reject(String code, String message);
}
