package dev.pagewarden.core.policy;

import dev.pagewarden.core.kv.CacheScope;

import java.util.List;

/**
 * Which cache scopes prefill searches for a prompt's leading cached pages. In production only the request's own
 * scope: its tenant and prompt cache key. Whatever scope the pages come from, the request's steps still run in
 * its own scope, so the pool's read check refuses a page of another scope.
 */
public interface PrefixLookup {

    /** Production: the request's own scope only. */
    PrefixLookup OWN_SCOPE = List::of;

    /**
     * The scopes searched for a prompt of scope {@code reader}, in order of preference: the longest run of
     * matching cached pages wins, the earlier scope on a tie.
     */
    List<CacheScope> scopes(CacheScope reader);
}
