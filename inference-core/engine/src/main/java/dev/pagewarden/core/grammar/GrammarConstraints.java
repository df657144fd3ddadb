package dev.pagewarden.core.grammar;

import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenType;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Response formats over one model's vocabulary: each token stands for its bytes ({@link TextTokenizer#bytes}), and a
 * token may come next when the grammar accepts all its bytes from where the output stands. Control, unknown and
 * unused tokens (their text is not output text) and tokens without bytes never may; a token that would run past
 * the end of the value neither. The end-of-sequence token is not needed: a request ends when its value is complete.
 *
 * <p>The mask of a grammar state is computed once and cached with the compiled grammar (up to
 * {@link #STATES_PER_GRAMMAR} states each); compiled grammars are cached by their schema's text, the
 * {@link #GRAMMARS} most recently used, so requests with the same schema share their masks. A mask over a large
 * vocabulary takes tens to hundreds of milliseconds (over Qwen3's 151k tokens), and the decode thread that needs
 * one holds up the whole batch meanwhile: so when a grammar is first asked for, a background thread warms it,
 * computing the masks of the states reachable from its start breadth first (up to a budget of states), usually
 * ahead of the requests that reach them. A state whose mask is missing when a request samples is computed by the thread that
 * samples, which never waits for the warmer (the engine samples outside its locks). Thread-safe.
 */
public final class GrammarConstraints {
    static final int GRAMMARS = 32;
    static final int STATES_PER_GRAMMAR = 4096;
    /** States kept shared per grammar, each with its transitions filled as they are used. */
    static final int SHARED_STATES_PER_GRAMMAR = 4096;
    /**
     * The states whose masks a grammar's warming computes ahead, by default: the JVM system property
     * {@code pagewarden.grammar.warm-states}, else 64 (0 switches warming off: on a machine whose every core runs the
     * model's kernels the warmer competes with them).
     */
    public static final int WARM_STATES = Integer.getInteger("pagewarden.grammar.warm-states", 64);
    /** Set on the warmer's thread while it warms: the one thread that may wait for a mask another computes. */
    private static final ThreadLocal<Boolean> WARMING = ThreadLocal.withInitial(() -> false);
    /** Grammars waiting to be warmed, at most: more new schemas at once are computed on demand only. */
    static final int WARM_QUEUE = 64;
    /** One low-priority daemon thread warms grammars for every vocabulary, one state at a time. */
    private static final ExecutorService WARMER = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(WARM_QUEUE), r -> {
                Thread t = new Thread(r, "grammar-mask-warmer");
                t.setDaemon(true);
                t.setPriority(Thread.MIN_PRIORITY);
                return t;
            });

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
            if (size() > GRAMMARS) {
                eldest.getValue().evicted = true; // its warming stops
                return true;
            }
            return false;
        }
    };

    private final int warmStates;

    public GrammarConstraints(TextTokenizer tokenizer) {
        this(tokenizer, WARM_STATES);
    }

    /** {@code warmStates}: how many states' masks a grammar's warming computes ahead (0: none, all on demand). */
    public GrammarConstraints(TextTokenizer tokenizer, int warmStates) {
        if (warmStates < 0) {
            throw new IllegalArgumentException("warmStates must not be negative, got " + warmStates);
        }
        this.warmStates = warmStates;
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

    /**
     * The constraint for {@code grammar}: compiled for this vocabulary once while it stays cached, and its masks
     * warmed in the background the first time.
     */
    public TokenConstraint constraint(JsonGrammar grammar) {
        Compiled compiled;
        boolean fresh;
        synchronized (grammars) {
            compiled = grammars.get(grammar.key());
            fresh = compiled == null;
            if (fresh) {
                compiled = new Compiled(grammar);
                grammars.put(grammar.key(), compiled);
            }
        }
        if (fresh && warmStates == 0) {
            compiled.warmed.countDown();
        } else if (fresh) {
            Compiled c = compiled;
            try {
                WARMER.execute(() -> c.warm(warmStates));
            } catch (RejectedExecutionException e) {
                c.warmed.countDown(); // too many waiting: this one is computed on demand
            }
        }
        return compiled;
    }

    /** How many of {@code constraint}'s states have their masks computed (warmed or reached); for measurements. */
    public static int computedStates(TokenConstraint constraint) {
        return constraint instanceof GrammarConstraints.Compiled c ? c.computed() : 0;
    }

    /** Waits until {@code constraint}'s background warming has ended (its budget spent or every state warmed). */
    public static void awaitWarm(TokenConstraint constraint) throws InterruptedException {
        if (constraint instanceof GrammarConstraints.Compiled c) {
            c.warmed.await();
        }
    }

    /** What a state allows: its mask, whether the value is complete (nothing may follow), and the states after it. */
    private record Info(BitSet allowed, boolean complete, Set<Automaton.State> next) {
    }

    private final class Compiled implements TokenConstraint {
        private final Cursor start;
        private final String source;
        /** Each state's mask, computed once by whichever thread asks first (the others wait for it). */
        private final Map<Automaton.State, CompletableFuture<Info>> infos = new ConcurrentHashMap<>();
        /** Counted down when warming has ended. */
        final CountDownLatch warmed = new CountDownLatch(1);
        /** Dropped from the cache: warming it further helps no request. */
        volatile boolean evicted;
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
            CompletableFuture<Info> known = infos.get(s);
            if (known == null) {
                if (infos.size() >= STATES_PER_GRAMMAR) {
                    return compute(s); // the cache is full: computed each time, never blocking on another thread
                }
                CompletableFuture<Info> mine = new CompletableFuture<>();
                known = infos.putIfAbsent(s, mine);
                if (known == null) {
                    try {
                        Info info = compute(s);
                        mine.complete(info);
                        return info;
                    } catch (RuntimeException | Error e) {
                        infos.remove(s, mine);
                        mine.completeExceptionally(e);
                        throw e;
                    }
                }
            }
            Info done = known.getNow(null);
            if (done != null || WARMING.get()) {
                return done != null ? done : known.join();
            }
            // the low-priority warmer is computing it: a request never waits for that thread (on a busy machine it
            // may be far behind); it computes the mask itself, and the first of the two to finish is kept
            Info info = compute(s);
            known.complete(info);
            return info;
        }

        int computed() {
            return (int) infos.values().stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count();
        }

        /** Computes the masks of up to {@code budget} states reachable from the start, breadth first. */
        void warm(int budget) {
            WARMING.set(true);
            try {
                Set<Automaton.State> seen = new HashSet<>();
                Deque<Automaton.State> queue = new ArrayDeque<>();
                Automaton.State first = start.state;
                queue.add(first);
                seen.add(first);
                for (int done = 0; done < budget && !queue.isEmpty() && infos.size() < STATES_PER_GRAMMAR
                        && !evicted; done++) {
                    for (Automaton.State next : info(queue.poll()).next()) {
                        if (seen.add(next)) {
                            queue.add(next);
                        }
                    }
                }
            } finally {
                WARMING.set(false);
                warmed.countDown();
            }
        }

        /** Walks the sorted tokens, reusing the states of the prefix each shares with the one before. */
        private Info compute(Automaton.State s) {
            BitSet allowed = new BitSet(vocabSize);
            Set<Automaton.State> next = new HashSet<>();
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
                    next.add(depth[d]);
                }
            }
            boolean complete = s.accepting();
            for (int b = 0; b < 256 && complete; b++) {
                complete = step(s, b).dead();
            }
            return new Info(allowed, complete, Set.copyOf(next));
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
