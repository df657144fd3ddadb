package dev.pagewarden.platform.report;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.pagewarden.adminui.report.ReportProperties;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.Optional;

/**
 * Per client address token buckets (Bucket4j, in memory on each replica) for the public report
 * endpoints: submissions per hour and status lookups per minute. The buckets of addresses not seen
 * for an hour are forgotten, and at most 100,000 addresses are kept (the least recent go first).
 */
@Component
class ReportLimits {
    enum Kind { SUBMIT, LOOKUP }

    private final Cache<String, Bucket> buckets = Caffeine.newBuilder().maximumSize(100_000)
            .expireAfterAccess(Duration.ofHours(1)).build();
    private final ReportProperties properties;

    ReportLimits(ReportProperties properties) {
        this.properties = properties;
    }

    /** Takes one from the address's bucket: empty when allowed, else how long until the next one is. */
    Optional<Duration> take(Kind kind, String address) {
        Bucket bucket = buckets.get(kind + " " + address, k -> switch (kind) {
            case SUBMIT -> bucket(properties.submissionsPerHour(), Duration.ofHours(1));
            case LOOKUP -> bucket(properties.lookupsPerMinute(), Duration.ofMinutes(1));
        });
        ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(1);
        return probe.isConsumed() ? Optional.empty() : Optional.of(Duration.ofNanos(probe.getNanosToWaitForRefill()));
    }

    private static Bucket bucket(int perPeriod, Duration period) {
        return Bucket.builder().addLimit(l -> l.capacity(perPeriod).refillGreedy(perPeriod, period)).build();
    }
}
