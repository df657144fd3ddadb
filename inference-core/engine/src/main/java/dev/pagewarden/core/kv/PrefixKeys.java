package dev.pagewarden.core.kv;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The keys of a prompt's full pages in the prefix cache, chained: page i's key is SHA-256 of page
 * i-1's key and page i's tokens, and the chain is seeded with the model, the scope and the template.
 * So a key names a page's tokens together with everything before them, in one model, scope and
 * template: two prompts share a cached page only if they agree on every token up to its end.
 */
public final class PrefixKeys {
    private PrefixKeys() {
    }

    /** Keys of the first {@code pages} full pages of {@code tokens} ({@code pageTokens} each). */
    public static List<String> chain(String modelId, CacheScope scope, String template, int[] tokens, int pageTokens,
                                     int pages) {
        if ((long) pages * pageTokens > tokens.length) {
            throw new IllegalArgumentException(pages + " full pages of " + pageTokens + " tokens need more than the "
                    + tokens.length + " tokens given");
        }
        MessageDigest sha = CacheScope.sha256();
        byte[] key = sha.digest(("pagewarden-prefix\u0000" + modelId + "\u0000" + scope.id() + "\u0000"
                + (template == null ? "" : template)).getBytes(StandardCharsets.UTF_8));
        List<String> keys = new ArrayList<>(pages);
        byte[] page = new byte[pageTokens * Integer.BYTES];
        for (int p = 0; p < pages; p++) {
            for (int t = 0; t < pageTokens; t++) {
                int v = tokens[p * pageTokens + t];
                int at = t * Integer.BYTES;
                page[at] = (byte) (v >>> 24);
                page[at + 1] = (byte) (v >>> 16);
                page[at + 2] = (byte) (v >>> 8);
                page[at + 3] = (byte) v;
            }
            sha.update(key);
            sha.update(page);
            key = sha.digest();
            keys.add(HexFormat.of().formatHex(key));
        }
        return keys;
    }
}
