package dev.pagewarden.core.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * SentencePiece-style BPE tokenizer that reproduces llama2.c's {@code encode} and {@code decode}
 * token for token.
 *
 * <p>Encoding: optional BOS; a dummy-prefix space when the text is non-empty; every Unicode code
 * point becomes its own piece, or its UTF-8 bytes as {@code <0xNN>} byte-fallback pieces when the
 * vocabulary lacks it; then, repeatedly, the adjacent pair whose concatenation is the
 * highest-scoring piece is merged (ties: the leftmost pair); finally an optional EOS. Like
 * llama2.c, BOS takes part in the merge scan (no real vocabulary has a piece that could merge with
 * it) and EOS is appended after merging.
 *
 * <p>Decoding: {@link #decode(int, int)} is llama2.c's primitive. {@link #decode(int[])} and
 * {@link StreamDecoder} turn token streams into text: they join the raw bytes first so a character
 * split over several byte tokens comes out whole, and they print nothing for BOS and EOS.
 *
 * <p>Immutable and thread-safe; stream decoders are per stream and not thread-safe.
 */
public final class Tokenizer {
    /** llama2.c starts its best score at -1e10, so pieces scored at or below that never merge. */
    private static final float MIN_MERGE_SCORE = -1e10f;

    private final Vocabulary vocab;
    private final Map<String, Integer> ids;
    /** Id of the {@code <0xNN>} piece per byte value, -1 where the vocabulary has none. */
    private final int[] byteIds = new int[256];

    public Tokenizer(Vocabulary vocab) {
        this.vocab = vocab;
        int n = vocab.size();
        if (n == 0) {
            throw new IllegalArgumentException("vocabulary is empty");
        }
        requireId("BOS", vocab.bosId());
        requireId("EOS", vocab.eosId());
        ids = HashMap.newHashMap(n);
        for (int id = 0; id < n; id++) {
            ids.putIfAbsent(vocab.tokens().get(id), id); // a duplicated piece resolves to its lowest id
        }
        for (int b = 0; b < 256; b++) {
            byteIds[b] = ids.getOrDefault(bytePiece(b), -1);
        }
    }

    public int vocabSize() {
        return vocab.size();
    }

    public int bos() {
        return vocab.bosId();
    }

    public int eos() {
        return vocab.eosId();
    }

    /** The piece of {@code token} in llama2.c spelling. */
    public String piece(int token) {
        checkToken(token);
        return vocab.tokens().get(token);
    }

    // ---------------------------------------------------------------------------------- encoding

    /**
     * Encodes {@code text} exactly as llama2.c does. The empty text yields only the requested BOS/EOS.
     *
     * @throws IllegalArgumentException if the text holds an unpaired surrogate (it has no UTF-8 form),
     *                                  or a code point that is neither a piece nor byte-encodable
     */
    public int[] encode(String text, boolean bos, boolean eos) {
        if (text == null) {
            throw new NullPointerException("text to encode is null");
        }
        Merger merger = new Merger(text.length() + 3);
        if (bos) {
            merger.add(bos());
        }
        if (!text.isEmpty()) {
            addCodePoint(merger, ' '); // SentencePiece's add_dummy_prefix
        }
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) { // unpaired: no UTF-8 form
                throw new IllegalArgumentException("cannot encode text: unpaired surrogate U+"
                        + Integer.toHexString(cp).toUpperCase() + " at index " + i);
            }
            addCodePoint(merger, cp);
            i += Character.charCount(cp);
        }
        int[] merged = merger.mergeAll();
        if (!eos) {
            return merged;
        }
        int[] out = Arrays.copyOf(merged, merged.length + 1);
        out[merged.length] = eos();
        return out;
    }

    private void addCodePoint(Merger merger, int cp) {
        String s = Character.toString(cp);
        Integer id = ids.get(s);
        if (id != null) {
            merger.add(id);
            return;
        }
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int byteId = byteIds[b & 0xFF];
            if (byteId < 0) {
                throw new IllegalArgumentException("cannot encode U+" + String.format("%04X", cp)
                        + ": the vocabulary has neither that piece nor the byte-fallback piece " + bytePiece(b & 0xFF));
            }
            merger.add(byteId);
        }
    }

    /**
     * The merge loop. llama2.c rescans all pairs per merge (quadratic); this keeps the candidate
     * pairs in a priority queue instead, ordered by (score desc, position asc), which picks the very
     * same pair at every step. Symbols form a linked list; a node's version changes whenever its
     * token does, so queued pairs that went stale are recognised and dropped.
     */
    private final class Merger {
        private int[] token;
        private int[] next;
        private int[] prev;
        private int[] version;
        private int size;
        private final PriorityQueue<Pair> queue = new PriorityQueue<>();

        /** Left node index doubles as the position tie-break: merging never reorders nodes. */
        private record Pair(int left, int right, int leftVersion, int rightVersion, int merged, float score)
                implements Comparable<Pair> {
            @Override
            public int compareTo(Pair o) {
                // primitive comparison on purpose: like C's '>', it sees -0.0 and 0.0 as a tie
                if (score != o.score) {
                    return score > o.score ? -1 : 1;
                }
                return Integer.compare(left, o.left);
            }
        }

        Merger(int capacity) {
            token = new int[capacity];
            next = new int[capacity];
            prev = new int[capacity];
            version = new int[capacity];
        }

        void add(int id) {
            if (size == token.length) {
                int cap = size * 2;
                token = Arrays.copyOf(token, cap);
                next = Arrays.copyOf(next, cap);
                prev = Arrays.copyOf(prev, cap);
                version = Arrays.copyOf(version, cap);
            }
            token[size] = id;
            prev[size] = size - 1;
            next[size] = -1;
            if (size > 0) {
                next[size - 1] = size;
            }
            size++;
        }

        int[] mergeAll() {
            for (int i = 0; i + 1 < size; i++) {
                offer(i, i + 1);
            }
            while (!queue.isEmpty()) {
                Pair p = queue.poll();
                if (version[p.left] != p.leftVersion || version[p.right] != p.rightVersion) {
                    continue; // one side was merged away or changed since this pair was queued
                }
                token[p.left] = p.merged;
                version[p.left]++;
                version[p.right] = -1; // removed for good
                int after = next[p.right];
                next[p.left] = after;
                if (after >= 0) {
                    prev[after] = p.left;
                    offer(p.left, after);
                }
                if (prev[p.left] >= 0) {
                    offer(prev[p.left], p.left);
                }
            }
            int count = 0;
            int[] out = new int[size];
            for (int i = size == 0 ? -1 : 0; i >= 0; i = next[i]) {
                out[count++] = token[i];
            }
            return Arrays.copyOf(out, count);
        }

        private void offer(int left, int right) {
            Integer merged = ids.get(vocab.tokens().get(token[left]) + vocab.tokens().get(token[right]));
            if (merged != null && vocab.scores()[merged] > MIN_MERGE_SCORE) {
                queue.add(new Pair(left, right, version[left], version[right], merged, vocab.scores()[merged]));
            }
        }
    }

    // ---------------------------------------------------------------------------------- decoding

    /**
     * llama2.c's decode: the piece of {@code token}, without its leading space when it follows BOS,
     * and a {@code <0xNN>} piece stands for that raw byte. A raw byte of 0x80 or above is not text on
     * its own and comes back as U+FFFD; use {@link #decodeBytes} or a {@link StreamDecoder} to keep it.
     */
    public String decode(int prevToken, int token) {
        return new String(decodeBytes(prevToken, token), StandardCharsets.UTF_8);
    }

    /** The bytes {@link #decode(int, int)} stands for, byte tokens kept raw. */
    public byte[] decodeBytes(int prevToken, int token) {
        String piece = piece(token);
        if (prevToken == bos() && piece.startsWith(" ")) {
            piece = piece.substring(1); // SentencePiece drops the dummy prefix after BOS
        }
        int raw = parseBytePiece(piece);
        return raw >= 0 ? new byte[]{(byte) raw} : piece.getBytes(StandardCharsets.UTF_8);
    }

    /** Text of a whole token sequence; BOS and EOS print nothing. */
    public String decode(int[] tokens) {
        StreamDecoder d = streamDecoder();
        StringBuilder sb = new StringBuilder();
        for (int t : tokens) {
            sb.append(d.accept(t));
        }
        return sb.append(d.finish()).toString();
    }

    /** A decoder for one stream of tokens, such as a generation's token callbacks. */
    public StreamDecoder streamDecoder() {
        return new StreamDecoder();
    }

    /**
     * Turns tokens into text as soon as it is complete: bytes of a character split over byte
     * tokens are held back until its last byte arrives. Invalid UTF-8 becomes U+FFFD.
     */
    public final class StreamDecoder {
        private final Utf8Buffer text = new Utf8Buffer();
        private int prev = -1;

        private StreamDecoder() {
        }

        /** Feeds one token; returns the text it completes (maybe empty). */
        public String accept(int token) {
            checkToken(token);
            int prevToken = prev;
            prev = token;
            if (token == bos() || token == eos()) {
                return "";
            }
            return text.add(decodeBytes(prevToken, token));
        }

        /** Ends the stream: an unfinished character at the end becomes U+FFFD. */
        public String finish() {
            prev = -1;
            return text.finish();
        }
    }

    // ---------------------------------------------------------------------------------- helpers

    private static String bytePiece(int b) {
        return String.format("<0x%02X>", b);
    }

    /** The byte a {@code <0xNN>} piece (hex digits in either case) stands for, or -1. */
    private static int parseBytePiece(String piece) {
        if (piece.length() != 6 || !piece.startsWith("<0x") || piece.charAt(5) != '>') {
            return -1;
        }
        int hi = hexDigit(piece.charAt(3));
        int lo = hexDigit(piece.charAt(4));
        return hi < 0 || lo < 0 ? -1 : hi << 4 | lo;
    }

    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    }

    private void checkToken(int token) {
        if (token < 0 || token >= vocab.size()) {
            throw new IllegalArgumentException("token id " + token + " is out of range for a vocabulary of "
                    + vocab.size() + " tokens");
        }
    }

    private void requireId(String what, int id) {
        if (id < 0 || id >= vocab.size()) {
            throw new IllegalArgumentException(what + " id " + id + " is out of range for a vocabulary of "
                    + vocab.size() + " tokens");
        }
    }
}
