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

    @Test
    void rateLimitsReportWhatTheBucketsHoldAndWhenTheyAreFullAgain() {
        TenantPrincipal t = tenant(new TenantLimits(2, 100, null, null));
        assertThat(quotas.rateLimits(t)).as("untouched: full").isEqualTo(new Quotas.RateLimits(
                new Quotas.RateWindow(2, 2, Duration.ZERO), new Quotas.RateWindow(100, 100, Duration.ZERO)));
        Quotas.Permit p = quotas.acquire(t, 80);
        assertThat(quotas.rateLimits(t)).isEqualTo(new Quotas.RateLimits(
                new Quotas.RateWindow(2, 1, Duration.ofSeconds(30)), new Quotas.RateWindow(100, 20, Duration.ofSeconds(48))));
        p.release(30); // 50 unused tokens come back
        assertThat(quotas.rateLimits(t).tokens()).isEqualTo(new Quotas.RateWindow(100, 70, Duration.ofSeconds(18)));
        now.addAndGet(Duration.ofSeconds(6).toNanos()); // refills 0.2 requests and 10 tokens
        assertThat(quotas.rateLimits(t)).isEqualTo(new Quotas.RateLimits(
                new Quotas.RateWindow(2, 1, Duration.ofSeconds(24)), new Quotas.RateWindow(100, 80, Duration.ofSeconds(12))));
        assertThatThrownBy(() -> quotas.acquire(t, 90)).isInstanceOf(QuotaExceededException.class);
        assertThat(quotas.rateLimits(t).tokens()).as("a refusal takes nothing").isEqualTo(
                new Quotas.RateWindow(100, 80, Duration.ofSeconds(12)));
        now.addAndGet(Duration.ofMinutes(1).toNanos());
        assertThat(quotas.rateLimits(t).requests()).isEqualTo(new Quotas.RateWindow(2, 2, Duration.ZERO));

        assertThat(quotas.rateLimits(tenant(new TenantLimits(5, null, null, null)))).as("a new limit starts full, "
                + "and one the tenant does not have is absent").isEqualTo(new Quotas.RateLimits(
                new Quotas.RateWindow(5, 5, Duration.ZERO), null));
        assertThat(quotas.rateLimits(tenant(TenantLimits.NONE))).isEqualTo(new Quotas.RateLimits(null, null));
    }
}
