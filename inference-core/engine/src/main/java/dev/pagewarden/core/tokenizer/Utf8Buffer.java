package dev.pagewarden.core.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * UTF-8 bytes in, complete characters out: the bytes of an unfinished character wait for the rest,
 * so no returned chunk ever holds half a character. Invalid UTF-8 becomes U+FFFD. Not thread-safe.
 */
final class Utf8Buffer {
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    /** Bytes of an unfinished character (at most 3), kept between calls. */
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** Adds {@code bytes}; returns the text they complete (maybe empty). */
    String add(byte[] bytes) {
        pending.writeBytes(bytes);
        return drain(false);
    }

    /** Ends the input: an unfinished character at the end becomes U+FFFD; then ready for a new stream. */
    String finish() {
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
