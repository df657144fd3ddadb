package dev.pagewarden.platform.tenant;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class KeyCacheTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final KeyCache cache = new KeyCache(100, Duration.ofSeconds(30), Duration.ofMinutes(10), now::get);
    private final TenantPrincipal acme = new TenantPrincipal("t_acme", "pw_aaaaaaaaaa", TenantLimits.NONE);
    private final TenantPrincipal other = new TenantPrincipal("t_other", "pw_bbbbbbbbbb", TenantLimits.NONE);

    @Test
    void keyedByDigestNotBySecret() {
        String key = "pw_aaaaaaaaaa_" + "s".repeat(43);
        assertThat(KeyCache.digest(key)).hasSize(64).doesNotContain("sss").isEqualTo(KeyCache.digest(key));
    }

    @Test
    void dueForReverificationAfterItsIntervalAndGoneAfterMaxAge() {
        cache.put("d1", acme, new byte[]{1}, cache.epoch());
        assertThat(cache.dueForReverify(cache.get("d1"))).isFalse();
        now.addAndGet(Duration.ofSeconds(30).toNanos());
        assertThat(cache.dueForReverify(cache.get("d1"))).as("re-checked in the background from now on").isTrue();
        now.addAndGet(Duration.ofMinutes(10).toNanos());
        assertThat(cache.get("d1")).as("never re-verified for the max age: forgotten").isNull();
    }

    @Test
    void aSuccessfulReverificationRestartsTheClock() {
        cache.put("d1", acme, new byte[]{1}, cache.epoch());
        now.addAndGet(Duration.ofMinutes(9).toNanos());
        cache.put("d1", acme, new byte[]{1}, cache.epoch());
        now.addAndGet(Duration.ofMinutes(9).toNanos());
        assertThat(cache.get("d1")).isNotNull();
    }

    @Test
    void invalidationDropsMatchingEntriesOnly() {
        cache.put("d1", acme, new byte[]{1}, cache.epoch());
        cache.put("d2", other, new byte[]{2}, cache.epoch());
        cache.invalidate(p -> p.tenantId().equals("t_acme"));
        assertThat(cache.get("d1")).isNull();
        assertThat(cache.get("d2")).isNotNull();
    }

    @Test
    void aLookupThatOverlappedAnInvalidationIsNotKept() {
        long before = cache.epoch();
        cache.invalidate(p -> p.keyPrefix().equals("pw_aaaaaaaaaa")); // e.g. a revocation committed meanwhile
        cache.put("d1", acme, new byte[]{1}, before);
        assertThat(cache.get("d1")).isNull();
    }

    @Test
    void boundedInSize() {
        KeyCache small = new KeyCache(10, Duration.ofSeconds(30), Duration.ofMinutes(10), now::get);
        for (int i = 0; i < 100; i++) {
            small.put("d" + i, acme, new byte[]{1}, small.epoch());
        }
        assertThat(small.size()).isLessThanOrEqualTo(10);
    }
}
