package dev.pagewarden.core.grammar;

import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenType;

import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Response formats over one model's vocabulary: each token stands for its bytes ({@link TextTokenizer#bytes}), and a
 * token may come next when the grammar accepts all its bytes from where the output stands. Control, unknown and
 * unused tokens (their text is not output text) and tokens without bytes never may; a token that would run past
 * the end of the value neither. The end-of-sequence token is not needed: a request ends when its value is complete.
 *
 * <p>The mask of a grammar state is computed once, when a request first reaches that state, and cached with the
 * compiled grammar (up to {@link #STATES_PER_GRAMMAR} states each); compiled grammars are cached by their schema's
 * text, the {@link #GRAMMARS} most recently used. Thread-safe.
 */
public final class GrammarConstraints {
    static final int GRAMMARS = 32;
    static final int STATES_PER_GRAMMAR = 4096;
    /** States kept shared per grammar, each with its transitions filled as they are used. */
    static final int SHARED_STATES_PER_GRAMMAR = 4096;

    /** Token ids with usable bytes, sorted by those bytes (unsigned), so neighbours share prefixes. */
    private final int[] ids;
    private final byte[][] bytes;
    /** Bytes each token shares with the one before it in {@link #ids}. */
    private final int[] shared;
    private final int vocabSize;
    private final byte[][] byId;
    private final Map<String, Compiled> grammars = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Compiled> eldest) {
            return size() > GRAMMARS;
        }
    };

    public GrammarConstraints(TextTokenizer tokenizer) {
        vocabSize = tokenizer.vocabSize();
        byId = new byte[vocabSize][];
        Integer[] usable = new Integer[vocabSize];
        int n = 0;
        for (int id = 0; id < vocabSize; id++) {
            TokenType t = tokenizer.type(id);
            if (t == TokenType.CONTROL || t == TokenType.UNKNOWN || t == TokenType.UNUSED) {
                continue;
            }
            byte[] b = tokenizer.bytes(id);
            if (b.length > 0) {
                byId[id] = b;
                usable[n++] = id;
            }
        }
        Arrays.sort(usable, 0, n, (a, b) -> Arrays.compareUnsigned(byId[a], byId[b]));
        ids = new int[n];
        bytes = new byte[n][];
        shared = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = usable[i];
            bytes[i] = byId[ids[i]];
            if (i > 0) {
                int m = Arrays.mismatch(bytes[i - 1], bytes[i]);
                shared[i] = m < 0 ? bytes[i].length : m;
            }
        }
    }

    /** The constraint for {@code grammar}: compiled for this vocabulary once while it stays cached. */
    public TokenConstraint constraint(JsonGrammar grammar) {
        synchronized (grammars) {
            return grammars.computeIfAbsent(grammar.key(), k -> new Compiled(grammar));
        }
    }

    /** What a state allows: its mask, and whether the value is complete (nothing may follow). */
    private record Info(BitSet allowed, boolean complete) {
    }

    private final class Compiled implements TokenConstraint {
        private final State start;
        private final String source;
        private final Map<Automaton.State, Info> infos = new ConcurrentHashMap<>();
        /**
         * Equal states share one instance, and so one transition table: a mask walks every token's bytes, and most
         * of those walks pass through the same few states (inside a string: one per length so far).
         */
        private final Map<Automaton.State, Automaton.State> canonical = new ConcurrentHashMap<>();

        Compiled(JsonGrammar grammar) {
            start = new Cursor(share(Automaton.start(grammar.root)));
            source = grammar.key();
        }

        @Override
        public String source() {
            return source;
        }

        private Automaton.State share(Automaton.State s) {
            if (canonical.size() >= SHARED_STATES_PER_GRAMMAR) {
                Automaton.State known = canonical.get(s);
                return known != null ? known : s;
            }
            Automaton.State known = canonical.putIfAbsent(s, s);
            return known != null ? known : s;
        }

        /** The state after byte {@code b}, from the transition table once it has been computed. */
        Automaton.State step(Automaton.State s, int b) {
            Automaton.State[] t = s.transitions();
            Automaton.State next = t[b & 0xFF];
            if (next == null) {
                next = share(Automaton.feed(s, b));
                t[b & 0xFF] = next; // a race computes an equal state twice: either is right
            }
            return next;
        }

        @Override
        public State start() {
            return start;
        }

        Info info(Automaton.State s) {
            Info info = infos.get(s);
            if (info == null) {
                info = compute(s);
                if (infos.size() < STATES_PER_GRAMMAR) {
                    infos.put(s, info);
                }
            }
            return info;
        }

        /** Walks the sorted tokens, reusing the states of the prefix each shares with the one before. */
        private Info compute(Automaton.State s) {
            BitSet allowed = new BitSet(vocabSize);
            Automaton.State[] depth = new Automaton.State[64];
            depth[0] = s;
            int valid = 0; // depth[0..valid] hold the states after the previous token's first bytes
            for (int i = 0; i < ids.length; i++) {
                byte[] b = bytes[i];
                int d = Math.min(valid, shared[i]);
                if (depth.length <= b.length) {
                    depth = Arrays.copyOf(depth, b.length * 2);
                }
                while (d < b.length && !depth[d].dead()) {
                    depth[d + 1] = step(depth[d], b[d]);
                    d++;
                }
                valid = d;
                if (d == b.length && !depth[d].dead()) {
                    allowed.set(ids[i]);
                }
            }
            boolean complete = s.accepting();
            for (int b = 0; b < 256 && complete; b++) {
                complete = step(s, b).dead();
            }
            return new Info(allowed, complete);
        }

        /** A request's place in the grammar. */
        private final class Cursor implements State {
            private final Automaton.State state;
            private Info info;

            Cursor(Automaton.State state) {
                this.state = state;
            }

            private Info info() {
                if (info == null) {
                    info = Compiled.this.info(state);
                }
                return info;
            }

            @Override
            public BitSet allowed() {
                return info().allowed();
            }

            @Override
            public boolean complete() {
                return info().complete();
            }

            @Override
            public State advance(int token) {
                byte[] b = token >= 0 && token < vocabSize ? byId[token] : null;
                Automaton.State next = state;
                for (int i = 0; b != null && i < b.length && !next.dead(); i++) {
                    next = step(next, b[i]);
                }
                if (b == null || next.dead()) {
                    throw new IllegalArgumentException("token " + token + " is not allowed here by the response format");
                }
                return new Cursor(next);
            }
        }
    }
}
