package dev.pagewarden.core.cluster;

import java.util.Locale;

/** What an engine node does: prompts into KV pages (prefill), or those pages into tokens (decode). */
public enum NodeRole {
    PREFILL, DECODE;

    /** The role's name on the command line and in status messages. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses "prefill" or "decode"; anything else is an error that lists both. */
    public static NodeRole parse(String s) {
        for (NodeRole r : values()) {
            if (r.label().equals(s)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown node role '" + s + "': expected prefill or decode");
    }
}
