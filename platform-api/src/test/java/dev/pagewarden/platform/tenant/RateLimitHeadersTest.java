package dev.pagewarden.platform.tenant;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The headers' values in OpenAI's formats: integers, and durations as Go writes them. */
class RateLimitHeadersTest {

    @Test
    void durationsAreWrittenAsOpenAiWritesThem() {
        assertThat(RateLimitHeaders.duration(Duration.ZERO)).isEqualTo("0s");
        assertThat(RateLimitHeaders.duration(Duration.ofNanos(1))).as("rounded up to the millisecond").isEqualTo("1ms");
        assertThat(RateLimitHeaders.duration(Duration.ofMillis(120))).isEqualTo("120ms");
        assertThat(RateLimitHeaders.duration(Duration.ofSeconds(1))).isEqualTo("1s");
        assertThat(RateLimitHeaders.duration(Duration.ofMillis(8640))).isEqualTo("8.64s");
        assertThat(RateLimitHeaders.duration(Duration.ofMillis(20_005))).isEqualTo("20.005s");
        assertThat(RateLimitHeaders.duration(Duration.ofMinutes(6))).isEqualTo("6m0s");
        assertThat(RateLimitHeaders.duration(Duration.ofMillis(90_500))).isEqualTo("1m30.5s");
        assertThat(RateLimitHeaders.duration(Duration.ofSeconds(3723))).isEqualTo("1h2m3s");
    }

    @Test
    void aLimitTheTenantDoesNotHaveWritesNoHeaders() {
        HttpHeaders headers = new HttpHeaders();
        RateLimitHeaders.write(headers, new Quotas.RateLimits(null,
                new Quotas.RateWindow(1000, 250, Duration.ofMillis(45_000))));
        assertThat(headers.toSingleValueMap()).containsOnly(
                java.util.Map.entry("x-ratelimit-limit-tokens", "1000"),
                java.util.Map.entry("x-ratelimit-remaining-tokens", "250"),
                java.util.Map.entry("x-ratelimit-reset-tokens", "45s"));
    }
}
