package dev.pagewarden.core.request;

/** Why a generation ended normally. */
public enum FinishReason {
    /** The model produced an end-of-sequence token (not included in the output). */
    STOP,
    /** max_tokens were generated. */
    LENGTH
}
