package dev.pagewarden.incident.report;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * {@code pagewarden.report.*}: the outside-report intake ({@code /report}) and {@code /.well-known/security.txt}.
 *
 * @param publicUrl           the platform's public base URL ({@code https://llm.example.com}): security.txt's
 *                            Canonical and its Contact for the form; without it the request's own address is used
 * @param contacts            further Contact lines for security.txt ({@code mailto:security@example.com})
 * @param expires             security.txt's Expires; unset: {@code expires-after} from now
 * @param expiresAfter        how far ahead a computed Expires lies
 * @param languages           security.txt's Preferred-Languages
 * @param difficulty          proof-of-work zero bits a report must solve (about 2^bits hashes in the browser)
 * @param untriagedExpiry     a reported incident no responder has triaged in this long is closed (it holds no lineage meanwhile)
 * @param challengeTtl        how long a proof-of-work challenge may be answered
 * @param submissionsPerHour  reports accepted per client address and hour (on each replica)
 * @param lookupsPerMinute    status lookups ({@code GET /report/{token}}) per client address and minute
 * @param maxDescription      longest description, in characters
 */
@ConfigurationProperties("pagewarden.report")
@Validated
public record ReportProperties(URI publicUrl,
                               @NotNull @DefaultValue List<String> contacts,
                               Instant expires,
                               @NotNull @DefaultValue("180d") Duration expiresAfter,
                               @NotNull @DefaultValue("en") String languages,
                               @Min(0) @Max(32) @DefaultValue("20") int difficulty,
                               @NotNull @DefaultValue("14d") Duration untriagedExpiry,
                               @NotNull @DefaultValue("10m") Duration challengeTtl,
                               @Positive @DefaultValue("5") int submissionsPerHour,
                               @Positive @DefaultValue("30") int lookupsPerMinute,
                               @Positive @DefaultValue("20000") int maxDescription) {
}
