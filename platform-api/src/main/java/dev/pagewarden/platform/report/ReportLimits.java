package dev.pagewarden.platform.report;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.pagewarden.incident.report.ClientPrefix;
import dev.pagewarden.incident.report.ReportProperties;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * Per client token buckets (Bucket4j, in memory on each replica) for the public report endpoints: submissions
 * per hour and status lookups per minute. A client is its {@link ClientPrefix}: an IPv4 address, an IPv6 /64.
 *
 * <p>At most {@value #MAX_CLIENTS} clients have buckets of their own; a bucket is forgotten after an hour
 * unused (by then it has refilled, so forgetting it grants nothing). Once that many are held, further clients
 * share one overflow bucket per kind ({@value #OVERFLOW_FACTOR} times one client's allowance) instead of
 * evicting a held one: filling the table with many addresses cannot reset anybody's bucket, it only makes the
 * newcomers share.
 */
@Component
class ReportLimits {
    enum Kind { SUBMIT, LOOKUP }

    static final int MAX_CLIENTS = 100_000;
    static final int OVERFLOW_FACTOR = 10;

    private final Cache<String, Bucket> buckets;
    private final Map<Kind, Bucket> overflow = new EnumMap<>(Kind.class);
    private final ReportProperties properties;
    private final int maxClients;

    @Autowired
    ReportLimits(ReportProperties properties) {
        this(properties, MAX_CLIENTS);
    }

    ReportLimits(ReportProperties properties, int maxClients) {
        this.properties = properties;
        this.maxClients = maxClients;
        // the size bound is a backstop only: take() stops adding at maxClients, below it
        this.buckets = Caffeine.newBuilder().maximumSize(2L * maxClients).expireAfterAccess(Duration.ofHours(1)).build();
        for (Kind kind : Kind.values()) {
            overflow.put(kind, bucket(kind, OVERFLOW_FACTOR));
        }
    }

    /** Takes one from the client's bucket: empty when allowed, else how long until the next one is. */
    Optional<Duration> take(Kind kind, String address) {
        String key = kind + " " + ClientPrefix.of(address);
        Bucket bucket = buckets.getIfPresent(key);
        if (bucket == null) {
            bucket = buckets.estimatedSize() >= maxClients ? overflow.get(kind) : buckets.get(key, k -> bucket(kind, 1));
        }
        ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(1);
        return probe.isConsumed() ? Optional.empty() : Optional.of(Duration.ofNanos(probe.getNanosToWaitForRefill()));
    }

    private Bucket bucket(Kind kind, int factor) {
        return switch (kind) {
            case SUBMIT -> bucket(properties.submissionsPerHour() * factor, Duration.ofHours(1));
            case LOOKUP -> bucket(properties.lookupsPerMinute() * factor, Duration.ofMinutes(1));
        };
    }

    private static Bucket bucket(int perPeriod, Duration period) {
        return Bucket.builder().addLimit(l -> l.capacity(perPeriod).refillGreedy(perPeriod, period)).build();
    }
}
