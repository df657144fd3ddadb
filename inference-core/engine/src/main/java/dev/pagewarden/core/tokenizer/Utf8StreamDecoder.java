package dev.pagewarden.core.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Turns one stream of tokens into text as soon as it is complete. Byte-level pieces and byte-fallback
 * pieces can end in the middle of a character; those bytes wait for the rest, so no emitted chunk
 * ever holds half a character. Invalid UTF-8 becomes U+FFFD. Per stream, not thread-safe.
 */
public final class Utf8StreamDecoder {
    private final TextTokenizer tokenizer;
    private final boolean renderControl;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    /** Bytes of an unfinished character (at most 3), kept between calls. */
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

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
        pending.writeBytes(tokenizer.bytes(token));
        return drain(false);
    }

    /** Ends the stream: an unfinished character at the end becomes U+FFFD. */
    public String finish() {
        String rest = drain(true);
        utf8.reset();
        return rest;
    }

    private String drain(boolean endOfInput) {
        ByteBuffer in = ByteBuffer.wrap(pending.toByteArray());
        CharBuffer out = CharBuffer.allocate(in.remaining() + 2);
        utf8.decode(in, out, endOfInput);
        if (endOfInput) {
            utf8.flush(out);
        }
        pending.reset();
        pending.write(in.array(), in.position(), in.remaining()); // an incomplete tail waits
        return out.flip().toString();
    }
}
