package dev.pagewarden.core.grammar;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The pushdown automaton a {@link JsonGrammar} runs as, one byte at a time: a state is the set of stacks the bytes
 * so far can be in (a set, because {@code anyOf}, enums, optional properties and the end of a number leave more than
 * one reading open until a later byte decides). Each stack holds frames, innermost first; every frame is immutable,
 * so states can be cached and shared.
 *
 * <p>The output is compact JSON: no whitespace anywhere. Numbers take at most 15 digits before and after the point
 * and 2 in the exponent, so every schema whose strings and arrays are bounded has a bounded output.
 */
final class Automaton {
    static final int MAX_DIGITS = 15;
    static final int MAX_EXPONENT_DIGITS = 2;
    private static final byte[] COLON = {':'};
    private static final byte[] COMMA = {','};
    private static final Node ANY_STRING = new Node.Str(0, -1);
    /** Any JSON value: the values inside a json_object. */
    static final Node ANY_VALUE = new Node.AnyOf(List.of(new Node.Obj(List.of(), true),
            new Node.Arr(Node.Any.INSTANCE, 0, -1), ANY_STRING, new Node.Num(false), literal("true"),
            literal("false"), literal("null")));

    private Automaton() {
    }

    static Node.Lit literal(String json) {
        return new Node.Lit(json.getBytes(StandardCharsets.UTF_8));
    }

    /** The state before any byte of a value of {@code root}. */
    static State start(Node root) {
        return new State(Set.of(new Stack(new Start(root), null)));
    }

    /** The state after byte {@code b}; empty when the grammar does not allow it. */
    static State feed(State s, int b) {
        Set<Stack> out = new HashSet<>(4);
        for (Stack stack : s.stacks) {
            feed(stack, b & 0xFF, out);
        }
        return new State(out.size() == 1 ? Set.of(out.iterator().next()) : Set.copyOf(out));
    }

    /** The top frame takes {@code b}; a frame that may end here also lets the frames under it take it. */
    private static void feed(Stack s, int b, Set<Stack> out) {
        if (s == null) {
            return;
        }
        s.top.step(b, s.rest, out);
        if (s.top.canEnd()) {
            feed(s.rest, b, out);
        }
    }

    private static Stack push(Stack rest, Frame... frames) {
        Stack s = rest;
        for (int i = frames.length - 1; i >= 0; i--) {
            s = new Stack(frames[i], s);
        }
        return s;
    }

    /** A set of stacks; equal states allow the same bytes from here on. */
    static final class State {
        final Set<Stack> stacks;
        private final int hash;
        /** The state after each byte, filled as they are asked for (only for a compiled grammar's shared states). */
        private State[] next;

        State(Set<Stack> stacks) {
            this.stacks = stacks;
            this.hash = stacks.hashCode();
        }

        State[] transitions() {
            State[] t = next;
            if (t == null) {
                t = new State[256];
                next = t;
            }
            return t;
        }

        boolean dead() {
            return stacks.isEmpty();
        }

        /** Whether the bytes so far are a whole value: some stack whose every frame may end. */
        boolean accepting() {
            for (Stack s : stacks) {
                Stack t = s;
                while (t != null && t.top.canEnd()) {
                    t = t.rest;
                }
                if (t == null) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof State other && hash == other.hash && stacks.equals(other.stacks);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    static final class Stack {
        final Frame top;
        final Stack rest;
        private final int hash;

        Stack(Frame top, Stack rest) {
            this.top = top;
            this.rest = rest;
            this.hash = 31 * top.hashCode() + (rest == null ? 0 : rest.hash);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Stack other && hash == other.hash && top.equals(other.top)
                    && Objects.equals(rest, other.rest);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    sealed interface Frame {
        /** Adds the stacks this frame (over {@code rest}) goes to on byte {@code b}. */
        void step(int b, Stack rest, Set<Stack> out);

        /** Whether this frame's value is complete here (it may also go on). */
        boolean canEnd();
    }

    /** About to read a value of {@code node}: its first byte picks the kind. */
    record Start(Node node) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            switch (node) {
                case Node.Obj o -> {
                    if (b == '{') {
                        out.add(push(rest, new InObject(o, 0, true, false)));
                    }
                }
                case Node.Arr a -> {
                    if (b == '[') {
                        out.add(push(rest, new InArray(a, 0, false)));
                    }
                }
                case Node.Str s -> {
                    if (b == '"') {
                        out.add(push(rest, new InString(s, 0, 0, 0, 0, false, false)));
                    }
                }
                case Node.Num n -> new InNumber(n.integer, 0, 0).step(b, rest, out);
                case Node.IntRange r -> new InInteger(r, false, 0, 0).step(b, rest, out);
                case Node.Lit l -> new InLiteral(l.bytes, 0).step(b, rest, out);
                case Node.AnyOf any -> {
                    for (Node option : any.options) {
                        new Start(option).step(b, rest, out);
                    }
                }
                case Node.Seq seq -> {
                    Frame[] frames = new Frame[seq.parts.size()];
                    for (int i = 0; i < frames.length; i++) {
                        frames[i] = new Start(seq.parts.get(i));
                    }
                    feed(push(rest, frames), b, out);
                }
                case Node.Any ignored -> new Start(ANY_VALUE).step(b, rest, out);
            }
        }

        @Override
        public boolean canEnd() {
            return false;
        }
    }

    /** Inside an object, before property {@code next} (in schema order) or the closing brace. */
    record InObject(Node.Obj obj, int next, boolean first, boolean closed) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (closed) {
                return;
            }
            if (b == '}' && (obj.any || obj.props.subList(next, obj.props.size()).stream().noneMatch(Node.Prop::required))) {
                out.add(push(rest, new InObject(obj, obj.props.size(), false, true)));
            }
            if (obj.any) {
                Stack member = push(rest, new Start(ANY_STRING), new InLiteral(COLON, 0), new Start(Node.Any.INSTANCE),
                        new InObject(obj, 0, false, false));
                feed(first ? member : push(member, new InLiteral(COMMA, 0)), b, out);
                return;
            }
            for (int j = next; j < obj.props.size(); j++) {
                Node.Prop p = obj.props.get(j);
                feed(push(rest, new InLiteral(first ? p.first() : p.next(), 0), new Start(p.value()),
                        new InObject(obj, j + 1, false, false)), b, out);
                if (p.required()) {
                    break; // a required property cannot be skipped
                }
            }
        }

        @Override
        public boolean canEnd() {
            return closed;
        }
    }

    /** Inside an array after {@code count} items (capped at the minimum, or 1, when there is no maximum). */
    record InArray(Node.Arr arr, int count, boolean closed) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (closed) {
                return;
            }
            if (b == ']' && count >= arr.min) {
                out.add(push(rest, new InArray(arr, count, true)));
            }
            if (arr.max >= 0 && count >= arr.max) {
                return;
            }
            InArray after = new InArray(arr, arr.max < 0 ? Math.min(count + 1, Math.max(arr.min, 1)) : count + 1, false);
            if (count == 0) {
                feed(push(rest, new Start(arr.items), after), b, out);
            } else if (b == ',') {
                out.add(push(rest, new Start(arr.items), after));
            }
        }

        @Override
        public boolean canEnd() {
            return closed;
        }
    }

    /**
     * Inside a string after {@code length} characters (capped at the minimum when there is no maximum), with
     * {@code pending} continuation bytes of a UTF-8 character to come (the next one in {@code lo..hi}), or after a
     * backslash. Only valid UTF-8 passes; escapes are the two-character ones (no {@code \\u}).
     */
    record InString(Node.Str str, int length, int pending, int lo, int hi, boolean escape, boolean closed)
            implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (closed) {
                return;
            }
            if (pending > 0) {
                if (b >= lo && b <= hi) {
                    out.add(push(rest, new InString(str, length, pending - 1, 0x80, 0xBF, false, false)));
                }
                return;
            }
            if (escape) {
                if ("\"\\/bfnrt".indexOf(b) >= 0) {
                    out.add(push(rest, new InString(str, length, 0, 0, 0, false, false)));
                }
                return;
            }
            if (b == '"') {
                if (length >= str.min) {
                    out.add(push(rest, new InString(str, str.min, 0, 0, 0, false, true)));
                }
                return;
            }
            if (b < 0x20 || (str.max >= 0 && length >= str.max)) {
                return;
            }
            int more;
            int lo2 = 0x80;
            int hi2 = 0xBF;
            if (b < 0x80) {
                more = 0;
            } else if (b >= 0xC2 && b <= 0xDF) {
                more = 1;
            } else if (b >= 0xE0 && b <= 0xEF) {
                more = 2;
                lo2 = b == 0xE0 ? 0xA0 : 0x80; // no overlong forms
                hi2 = b == 0xED ? 0x9F : 0xBF; // no surrogates
            } else if (b >= 0xF0 && b <= 0xF4) {
                more = 3;
                lo2 = b == 0xF0 ? 0x90 : 0x80;
                hi2 = b == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
            } else {
                return;
            }
            int counted = str.max < 0 ? Math.min(length + 1, str.min) : length + 1;
            out.add(push(rest, new InString(str, counted, more, more == 0 ? 0 : lo2, more == 0 ? 0 : hi2,
                    b == '\\', false)));
        }

        @Override
        public boolean canEnd() {
            return closed;
        }
    }

    /**
     * Inside a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, an integer without the last two parts.
     * Phases: 0 start, 1 after '-', 2 after a leading 0, 3 integer digits, 4 after '.', 5 fraction digits,
     * 6 after 'e', 7 after the exponent's sign, 8 exponent digits.
     */
    record InNumber(boolean integer, int phase, int digits) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            boolean digit = b >= '0' && b <= '9';
            InNumber next = switch (phase) {
                case 0, 1 -> b == '-' && phase == 0 ? at(1, 0) : b == '0' ? at(2, 0) : digit ? at(3, 1) : null;
                case 2, 3, 5 -> {
                    if (digit && phase != 2 && digits < MAX_DIGITS) {
                        yield at(phase, digits + 1);
                    }
                    if (integer) {
                        yield null;
                    }
                    yield b == '.' && phase != 5 ? at(4, 0) : b == 'e' || b == 'E' ? at(6, 0) : null;
                }
                case 4 -> digit ? at(5, 1) : null;
                case 6 -> b == '+' || b == '-' ? at(7, 0) : digit ? at(8, 1) : null;
                case 7 -> digit ? at(8, 1) : null;
                case 8 -> digit && digits < MAX_EXPONENT_DIGITS ? at(8, digits + 1) : null;
                default -> null;
            };
            if (next != null) {
                out.add(push(rest, next));
            }
        }

        private InNumber at(int p, int d) {
            return new InNumber(integer, p, d);
        }

        @Override
        public boolean canEnd() {
            return phase == 2 || phase == 3 || phase == 5 || phase == 8;
        }
    }

    /**
     * Inside an integer with bounds: the digits so far are kept, and a byte is allowed only if some way of going on
     * (this value or more digits, up to {@link #MAX_DIGITS}) lands within the bounds. So the value is in range
     * whenever it may end.
     */
    record InInteger(Node.IntRange range, boolean negative, long magnitude, int digits) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            InInteger next = null;
            if (b == '-' && digits == 0 && !negative) {
                next = new InInteger(range, true, 0, 0);
            } else if (b >= '0' && b <= '9' && digits < MAX_DIGITS && !(digits > 0 && magnitude == 0)
                    && !(b == '0' && digits == 0 && negative)) {
                next = new InInteger(range, negative, magnitude * 10 + (b - '0'), digits + 1);
            }
            if (next != null && next.reachable()) {
                out.add(push(rest, next));
            }
        }

        /** Whether this value, or one with more digits after it, is within the bounds. */
        private boolean reachable() {
            // magnitudes allowed for this sign
            long lo = negative ? Math.max(1, -range.max) : Math.max(0, range.min);
            long hi = negative ? -range.min : range.max;
            if (lo > hi) {
                return false;
            }
            if (digits == 0) {
                return true;
            }
            if (magnitude == 0) {
                return lo == 0;
            }
            long first = magnitude;
            long width = 1;
            for (int d = digits; d <= MAX_DIGITS; d++) {
                long last = first + width - 1;
                if (first <= hi && last >= lo) {
                    return true;
                }
                if (first > hi) {
                    return false;
                }
                first *= 10;
                width *= 10;
            }
            return false;
        }

        @Override
        public boolean canEnd() {
            if (digits == 0) {
                return false;
            }
            long value = negative ? -magnitude : magnitude;
            return value >= range.min && value <= range.max;
        }
    }

    /** Inside a literal after {@code pos} of its bytes (the array is shared: compared by identity). */
    record InLiteral(byte[] bytes, int pos) implements Frame {
        @Override
        public void step(int b, Stack rest, Set<Stack> out) {
            if (pos < bytes.length && (bytes[pos] & 0xFF) == b) {
                out.add(push(rest, new InLiteral(bytes, pos + 1)));
            }
        }

        @Override
        public boolean canEnd() {
            return pos == bytes.length;
        }
    }
}
