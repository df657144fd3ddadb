package dev.pagewarden.platform.adminport;

import dev.pagewarden.platform.testing.PlatformTestBase;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;

/**
 * The platform the outside-report and four-eyes tests share: a small proof of work (8 bits), three
 * reports per address and hour, and the loopback trusted as a proxy, so that each test speaks from its
 * own client address ({@code X-Forwarded-For}) and its rate limit is its own.
 */
@TestPropertySource(properties = {"pagewarden.report.difficulty=8", "pagewarden.report.submissions-per-hour=3",
        "pagewarden.report.lookups-per-minute=20", "pagewarden.http.trusted-proxies=127.0.0.1,::1",
        "pagewarden.report.public-url=https://llm.example.com", "pagewarden.report.contacts=mailto:security@example.com",
        "pagewarden.report.languages=en, de"})
abstract class ReportPlatformTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    static final String PASSWORD = "correct-horse-battery";

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    /** An anonymous client speaking from {@code address} (as the trusted proxy on loopback forwards it). */
    WebTestClient from(String address) {
        return client().mutate().defaultHeader("X-Forwarded-For", address).build();
    }

    /** A fresh challenge from the service, solved by the test's own SHA-256: {challenge, nonce}. */
    String[] solvedChallenge(WebTestClient client) {
        Map<?, ?> c = client.get().uri("/report/challenge").accept(MediaType.APPLICATION_JSON).exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        String challenge = (String) c.get("challenge");
        return new String[]{challenge, solve(challenge, ((Number) c.get("difficulty")).intValue())};
    }

    /** The first nonce whose SHA-256(challenge:nonce) has {@code bits} leading zero bits (counted through BigInteger). */
    static String solve(String challenge, int bits) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (long n = 0; ; n++) {
                byte[] h = sha.digest((challenge + ":" + n).getBytes(StandardCharsets.UTF_8));
                if (256 - new BigInteger(1, h).bitLength() >= bits) {
                    return Long.toString(n);
                }
            }
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
