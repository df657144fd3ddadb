package dev.pagewarden.core.tokenizer;

/**
 * Turns one stream of tokens into text as soon as it is complete. Byte-level pieces and byte-fallback
 * pieces can end in the middle of a character; those bytes wait for the rest, so no emitted chunk
 * ever holds half a character. Invalid UTF-8 becomes U+FFFD. Per stream, not thread-safe.
 */
public final class Utf8StreamDecoder {
    private final TextTokenizer tokenizer;
    private final boolean renderControl;
    private final Utf8Buffer text = new Utf8Buffer();

    /** With {@code renderControl}, control tokens print their spelling; otherwise nothing. */
    public Utf8StreamDecoder(TextTokenizer tokenizer, boolean renderControl) {
        this.tokenizer = tokenizer;
        this.renderControl = renderControl;
    }

    /** Feeds one token; returns the text it completes (maybe empty). */
    public String accept(int token) {
        if (token < 0 || token >= tokenizer.vocabSize()) {
            throw new IllegalArgumentException("token id " + token + " is out of range for a vocabulary of "
                    + tokenizer.vocabSize() + " tokens");
        }
        if (!renderControl && tokenizer.type(token) == TokenType.CONTROL) {
            return "";
        }
        return text.add(tokenizer.bytes(token));
    }

    /** Ends the stream: an unfinished character at the end becomes U+FFFD. */
    public String finish() {
        return text.finish();
    }
}
