package dev.pagewarden.platform.tenant;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tenant limits with a controlled clock: buckets refill over the minute, refunds return unused tokens. */
class QuotasTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final Quotas quotas = new Quotas(now::get);

    private static TenantPrincipal tenant(TenantLimits limits) {
        return new TenantPrincipal("t1", "pw_x", limits);
    }

    @Test
    void requestsPerMinuteRefillContinuously() {
        TenantPrincipal t = tenant(new TenantLimits(2, null, null, null));
        quotas.acquire(t, 10).close();
        quotas.acquire(t, 10).close();
        assertThatThrownBy(() -> quotas.acquire(t, 10)).isInstanceOfSatisfying(QuotaExceededException.class,
                e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(30)));
        now.addAndGet(Duration.ofSeconds(30).toNanos());
        quotas.acquire(t, 10).close();
    }

    @Test
    void tokensAreChargedUpFrontAndUnusedOnesRefunded() {
        TenantPrincipal t = tenant(new TenantLimits(null, 100, null, null));
        Quotas.Permit p = quotas.acquire(t, 80);
        assertThatThrownBy(() -> quotas.acquire(t, 30)).isInstanceOf(QuotaExceededException.class);
        p.release(20); // used 20 of the 80 charged
        quotas.acquire(t, 30).release(30);
        assertThatThrownBy(() -> quotas.acquire(t, 101)).hasMessageContaining("more than the tenant's limit");
    }

    @Test
    void concurrencyIsCountedUntilRelease() {
        TenantPrincipal t = tenant(new TenantLimits(null, null, 1, null));
        Quotas.Permit p = quotas.acquire(t, 1);
        assertThatThrownBy(() -> quotas.acquire(t, 1)).hasMessageContaining("concurrent");
        p.close();
        p.close(); // releasing twice does not free a second slot
        assertThat(quotas.running("t1")).isZero();
        quotas.acquire(t, 1);
        assertThatThrownBy(() -> quotas.acquire(t, 1)).isInstanceOf(QuotaExceededException.class);
    }

    @Test
    void refusalChargesNothing() {
        TenantPrincipal t = tenant(new TenantLimits(1, 50, null, null));
        assertThatThrownBy(() -> quotas.acquire(t, 60)).isInstanceOf(QuotaExceededException.class);
        quotas.acquire(t, 50).close(); // the refused request took neither a request nor tokens
    }
}
