package dev.pagewarden.core.grammar;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One value a schema allows, compiled. Nodes are compared by identity: a state holds the node it is in, and two
 * states are the same when they are in the same nodes at the same positions.
 */
sealed interface Node {

    /** An object: the listed properties in this order, required ones always, optional ones may be left out. */
    final class Obj implements Node {
        final List<Prop> props;
        /** Any keys with any values (json_object), props unused. */
        final boolean any;

        Obj(List<Prop> props, boolean any) {
            this.props = props;
            this.any = any;
        }
    }

    /** A property: its key as written first ({@code "name":}) and after another ({@code ,"name":}). */
    record Prop(byte[] first, byte[] next, Node value, boolean required) {
        static Prop of(String name, Node value, boolean required, String quotedName) {
            return new Prop((quotedName + ":").getBytes(StandardCharsets.UTF_8),
                    ("," + quotedName + ":").getBytes(StandardCharsets.UTF_8), value, required);
        }
    }

    /** An array of {@code min} to {@code max} items (max -1: no bound). */
    final class Arr implements Node {
        final Node items;
        final int min;
        final int max;

        Arr(Node items, int min, int max) {
            this.items = items;
            this.min = min;
            this.max = max;
        }
    }

    /** A string of {@code min} to {@code max} characters (code points; max -1: no bound). */
    final class Str implements Node {
        final int min;
        final int max;

        Str(int min, int max) {
            this.min = min;
            this.max = max;
        }
    }

    /** A JSON number, or an integer (no fraction, no exponent). */
    final class Num implements Node {
        final boolean integer;

        Num(boolean integer) {
            this.integer = integer;
        }
    }

    /** An integer from {@code min} to {@code max} (inclusive, both within the 15 digits the grammar writes). */
    final class IntRange implements Node {
        final long min;
        final long max;

        IntRange(long min, long max) {
            this.min = min;
            this.max = max;
        }
    }

    /** Exactly these bytes (const, an enum member, true, false, null), compact JSON. */
    final class Lit implements Node {
        final byte[] bytes;

        Lit(byte[] bytes) {
            this.bytes = bytes;
        }
    }

    /** Any one of these. */
    final class AnyOf implements Node {
        final List<Node> options;

        AnyOf(List<Node> options) {
            this.options = options;
        }
    }

    /** These, one after the other (a tool call: its wrapper text around the arguments' object). */
    final class Seq implements Node {
        final List<Node> parts;

        Seq(List<Node> parts) {
            this.parts = parts;
        }
    }

    /** Any JSON value (the values of a json_object). */
    final class Any implements Node {
        static final Any INSTANCE = new Any();

        private Any() {
        }
    }
}
