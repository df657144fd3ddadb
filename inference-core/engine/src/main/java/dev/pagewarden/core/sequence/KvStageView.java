package dev.pagewarden.core.sequence;

/** A stage whose reads or frames a check can refuse: it flags the request and fails it. */
public interface KvStageView extends SequenceView {
    /** Lab ground truth: a detector flagged this request. */
    void markDetected();

    /** Ends the request with an error the API reports under {@code code}. */
    void fail(String code, String message);
}
