package dev.pagewarden.incident.report;

import dev.pagewarden.incident.input.InvalidTextException;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The report form's proof of work against an independent solver: the test finds nonces with its own
 * SHA-256 and counts zero bits through BigInteger's bit length, not through the class's own helper.
 */
class ProofOfWorkTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final String CLIENT = "2001:db8:1:2::10";
    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));

    @Test
    void aSolvedChallengeVerifiesAndAnUnsolvedOneDoesNot() throws Exception {
        ProofOfWork work = new ProofOfWork(KEY, 10, Duration.ofMinutes(10), clock);
        ProofOfWork.Challenge c = work.issue(CLIENT);
        assertThat(c.difficulty()).isEqualTo(10);
        assertThat(c.expiresAt()).isEqualTo(clock.instant().plus(Duration.ofMinutes(10)));
        String nonce = solve(c.value(), 10, true);
        assertThat(work.verify(c.value(), nonce, CLIENT)).isEqualTo(sha256(c.value()));
        String wrong = solve(c.value(), 10, false);
        assertThatThrownBy(() -> work.verify(c.value(), wrong, CLIENT)).isInstanceOf(InvalidTextException.class)
                .hasMessageContaining("does not solve").extracting(e -> ((InvalidTextException) e).field()).isEqualTo("nonce");
    }

    @Test
    void forgedExpiredAndEasierChallengesAreRefused() throws Exception {
        ProofOfWork work = new ProofOfWork(KEY, 6, Duration.ofMinutes(10), clock);
        ProofOfWork.Challenge c = work.issue(CLIENT);
        // a challenge whose difficulty was lowered by the client: the signature no longer matches
        String[] parts = c.value().split("-");
        String forged = parts[0] + "-0-" + parts[2] + "-" + parts[3];
        assertThatThrownBy(() -> work.verify(forged, "1", CLIENT)).hasMessageContaining("not issued by this service");
        // another key signed it
        ProofOfWork other = new ProofOfWork("another key, 32 bytes long......".getBytes(StandardCharsets.UTF_8), 6,
                Duration.ofMinutes(10), clock);
        ProofOfWork.Challenge foreign = other.issue(CLIENT);
        assertThatThrownBy(() -> work.verify(foreign.value(), solve(foreign.value(), 6, true), CLIENT))
                .hasMessageContaining("not issued by this service");
        // expired
        String nonce = solve(c.value(), 6, true);
        clock.now = clock.now.plus(Duration.ofMinutes(11));
        assertThatThrownBy(() -> work.verify(c.value(), nonce, CLIENT)).hasMessageContaining("expired");
        // the service now asks for more than this challenge was issued with
        ProofOfWork harder = new ProofOfWork(KEY, 12, Duration.ofMinutes(10), clock);
        ProofOfWork.Challenge easy = new ProofOfWork(KEY, 6, Duration.ofMinutes(10), clock).issue(CLIENT);
        assertThatThrownBy(() -> harder.verify(easy.value(), solve(easy.value(), 6, true), CLIENT)).hasMessageContaining("easier");
        // malformed input names its field
        assertThatThrownBy(() -> work.verify("x", "1", CLIENT)).extracting(e -> ((InvalidTextException) e).field()).isEqualTo("challenge");
        assertThatThrownBy(() -> work.verify(easy.value(), "not a nonce!", CLIENT)).extracting(e -> ((InvalidTextException) e).field())
                .isEqualTo("nonce");
    }

    /** A challenge is spent only from the client it was issued to: the same /64 for IPv6, the same address for IPv4. */
    @Test
    void aChallengeIsBoundToTheClientItWasIssuedTo() throws Exception {
        ProofOfWork work = new ProofOfWork(KEY, 6, Duration.ofMinutes(10), clock);
        ProofOfWork.Challenge c = work.issue(CLIENT);
        String nonce = solve(c.value(), 6, true);
        assertThatThrownBy(() -> work.verify(c.value(), nonce, "2001:db8:1:3::10")).isInstanceOf(InvalidTextException.class)
                .hasMessageContaining("not issued by this service to your address");
        assertThatThrownBy(() -> work.verify(c.value(), nonce, "203.0.113.7")).hasMessageContaining("to your address");
        assertThat(work.verify(c.value(), nonce, "2001:db8:1:2:ffff::1")).isEqualTo(sha256(c.value()));
        ProofOfWork.Challenge v4 = work.issue("203.0.113.7");
        String n4 = solve(v4.value(), 6, true);
        assertThatThrownBy(() -> work.verify(v4.value(), n4, "203.0.113.8")).hasMessageContaining("to your address");
        assertThat(work.verify(v4.value(), n4, "203.0.113.7")).isEqualTo(sha256(v4.value()));
    }

    @Test
    void clientPrefixesAreWholeIpv4AddressesAndIpv6Slash64s() {
        assertThat(ClientPrefix.of("2001:db8:1:2::10")).isEqualTo(ClientPrefix.of("2001:0db8:0001:0002:ffff:1:2:3"))
                .isEqualTo("2001:db8:1:2::/64");
        assertThat(ClientPrefix.of("2001:db8:1:3::10")).isNotEqualTo(ClientPrefix.of("2001:db8:1:2::10"));
        assertThat(ClientPrefix.of("203.0.113.7")).isEqualTo("203.0.113.7");
        assertThat(ClientPrefix.of("not an address")).isEqualTo("not an address");
    }

    /** The first nonce that solves (or, with {@code solving} false, fails) the challenge, by the test's own count. */
    private static String solve(String challenge, int bits, boolean solving) throws Exception {
        for (long n = 0; ; n++) {
            byte[] h = sha256(challenge + ":" + n);
            int zeros = 256 - new BigInteger(1, h).bitLength();
            if ((zeros >= bits) == solving) {
                return Long.toString(n);
            }
        }
    }

    private static byte[] sha256(String s) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    }

    private static final class MutableClock extends Clock {
        Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
