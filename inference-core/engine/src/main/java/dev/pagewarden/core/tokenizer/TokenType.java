package dev.pagewarden.core.tokenizer;

/** Token kinds, numbered as GGUF's {@code tokenizer.ggml.token_type} (llama.cpp's enum). */
public enum TokenType {
    UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE;

    public static TokenType of(int code) {
        if (code < 0 || code >= values().length) {
            throw new IllegalArgumentException("unknown token type " + code + " (known: 0 to " + (values().length - 1) + ")");
        }
        return values()[code];
    }

    /** Added tokens: matched as a whole before the model's own splitting. */
    boolean isAdded() {
        return this == CONTROL || this == USER_DEFINED || this == UNKNOWN;
    }

    /** Tokens that only special parsing may produce from text. */
    boolean needsSpecialParsing() {
        return this == CONTROL || this == UNKNOWN;
    }
}
