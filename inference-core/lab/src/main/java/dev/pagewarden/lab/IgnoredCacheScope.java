package dev.pagewarden.lab;

import dev.pagewarden.core.kv.CacheScope;
import dev.pagewarden.core.policy.PrefixLookup;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@link Fault#IGNORE_CACHE_SCOPE}: a prefix lookup that forgets the tenant. It searches the request's own scope
 * first, then every scope of another tenant it has been asked for before, so a prompt whose pages match another
 * tenant's cached ones takes those. The request's steps still run in its own scope: the read check is what stops
 * the read.
 */
final class IgnoredCacheScope implements PrefixLookup {
    private final Set<CacheScope> seen = new LinkedHashSet<>();

    @Override
    public synchronized List<CacheScope> scopes(CacheScope reader) {
        List<CacheScope> out = new ArrayList<>();
        out.add(reader);
        for (CacheScope s : seen) {
            if (!s.tenant().equals(reader.tenant())) {
                out.add(s);
            }
        }
        seen.add(reader);
        return out;
    }
}
