package dev.pagewarden.platform.report;

import dev.pagewarden.incident.report.ReportProperties;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The report buckets: one per IPv4 address or IPv6 /64, and a full table makes newcomers share instead of evicting. */
class ReportLimitsTest {
    private static ReportProperties oneSubmissionPerHour() {
        return new ReportProperties(null, List.of(), null, Duration.ofDays(180), "en", 0, Duration.ofDays(14),
                Duration.ofMinutes(10), 1, 30, 20_000);
    }

    @Test
    void anIpv6Slash64IsOneClient() {
        ReportLimits limits = new ReportLimits(oneSubmissionPerHour());
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "2001:db8:7:7::1")).isEmpty();
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "2001:db8:7:7:abcd::99")).as("same /64").isPresent();
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "2001:db8:7:8::1")).as("next /64").isEmpty();
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "203.0.113.1")).isEmpty();
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "203.0.113.2")).as("IPv4: each address").isEmpty();
    }

    @Test
    void manyAddressesDoNotResetABucketTheyShareOneInstead() {
        ReportLimits limits = new ReportLimits(oneSubmissionPerHour(), 2);
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "198.51.100.1")).isEmpty();
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "198.51.100.2")).isEmpty();
        // the table is full: every newcomer draws on one overflow bucket of ten
        for (int i = 0; i < ReportLimits.OVERFLOW_FACTOR; i++) {
            assertThat(limits.take(ReportLimits.Kind.SUBMIT, "192.0.2." + (10 + i))).as("newcomer %d", i).isEmpty();
        }
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "192.0.2.200")).as("overflow spent").isPresent();
        // and the clients already held were not evicted by them: still limited
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "198.51.100.1")).isPresent();
        assertThat(limits.take(ReportLimits.Kind.SUBMIT, "198.51.100.2")).isPresent();
    }
}
