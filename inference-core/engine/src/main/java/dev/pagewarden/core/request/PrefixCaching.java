package dev.pagewarden.core.request;

/**
 * Whether a request's full prompt pages may be kept and reused as a prefix cache, and in which scope. The
 * scope is always the request's tenant, narrowed by {@code key} (OpenAI's {@code prompt_cache_key}, vLLM's
 * {@code cache_salt}): only requests of the same tenant and the same key (or both none) share pages.
 *
 * @param enabled  false: the request neither reuses nor leaves cached pages
 * @param key      the prompt cache key; null for none
 * @param template what turned the conversation into the prompt (a chat template's id, or "completion"):
 *                 part of every page's key, so prompts rendered by different templates never share a page
 */
public record PrefixCaching(boolean enabled, String key, String template) {
    /** The longest key accepted, in characters. */
    public static final int MAX_KEY_CHARS = 1024;

    /** Neither reuse nor keep. */
    public static final PrefixCaching OFF = new PrefixCaching(false, null, null);

    public PrefixCaching {
        if (key != null && (key.isEmpty() || key.length() > MAX_KEY_CHARS)) {
            throw new InvalidRequestException("prompt_cache_key", "prompt_cache_key must be 1 to " + MAX_KEY_CHARS
                    + " characters, got " + key.length());
        }
    }

    /** Cached in the tenant's scope narrowed by {@code key} (null: the tenant's requests without a key). */
    public static PrefixCaching on(String key, String template) {
        return new PrefixCaching(true, key, template);
    }
}
