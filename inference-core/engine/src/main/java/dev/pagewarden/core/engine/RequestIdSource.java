package dev.pagewarden.core.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's request ids: {@code base} plus a 32-bit number, unique within one engine start (the
 * platform gives each start its own block of 2^32). With a key the number is the request counter
 * passed through a keyed 32-bit permutation, so ids - which receipts carry to tenants - are unique
 * but say nothing about how many requests other tenants sent; key 0 keeps them sequential, for the
 * command line, benchmarks and the replay lab, whose output must be reproducible.
 */
public final class RequestIdSource {
    private static final int ROUNDS = 8;
    private final long base;
    private final int[] roundKeys;
    private final AtomicLong counter = new AtomicLong();

    public RequestIdSource(long base, long key) {
        this.base = base;
        this.roundKeys = key == 0 ? null : roundKeys(key);
    }

    public long next() {
        int n = (int) counter.incrementAndGet();
        return base + (Integer.toUnsignedLong(roundKeys == null ? n : permute(n, roundKeys)));
    }

    /** A balanced Feistel network over two 16-bit halves: a bijection on 32 bits whatever the round function. */
    static int permute(int value, int[] keys) {
        int left = value >>> 16;
        int right = value & 0xFFFF;
        for (int k : keys) {
            int mixed = (int) (mix(((long) right << 32) ^ (k & 0xFFFFFFFFL)) >>> 48);
            int next = left ^ mixed;
            left = right;
            right = next;
        }
        return (left << 16) | right;
    }

    static int[] roundKeys(long key) {
        int[] keys = new int[ROUNDS];
        long state = key;
        for (int i = 0; i < ROUNDS; i++) {
            state += 0x9E3779B97F4A7C15L;
            keys[i] = (int) mix(state);
        }
        return keys;
    }

    /** SplitMix64's finaliser: every input bit reaches every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
