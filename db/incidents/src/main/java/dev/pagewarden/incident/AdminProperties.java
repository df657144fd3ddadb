package dev.pagewarden.incident;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * {@code pagewarden.admin.*}: the admin UI's settings.
 *
 * @param initialPassword   the first admin's password (else a random one, printed once in the log)
 * @param sessionTimeout    idle time after which an admin session ends
 * @param incidentAttach    a safety event joins an open incident for the same model/worker whose last event is this recent
 * @param incidentLookback  the blast-radius window starts this long before the first event (exposures precede detection)
 * @param webhookAttempts   delivery attempts per notice before it is marked failed
 * @param webhookBackoff    wait before the second attempt; doubled each time
 * @param lineageSweep      how often the exposure finder sweeps recent lineage for cross-tenant reads (0 = only on demand)
 * @param throttle          login and admin-token guessing limits
 */
@ConfigurationProperties("pagewarden.admin")
@Validated
public record AdminProperties(String initialPassword,
                                @NotNull @DefaultValue("30m") Duration sessionTimeout,
                                @NotNull @DefaultValue("10m") Duration incidentAttach,
                                @NotNull @DefaultValue("5m") Duration incidentLookback,
                                @DefaultValue("4") int webhookAttempts,
                                @NotNull @DefaultValue("1s") Duration webhookBackoff,
                                @NotNull @DefaultValue("60s") Duration lineageSweep,
                                @NotNull @Valid @DefaultValue Throttle throttle) {

    /**
     * {@code pagewarden.admin.throttle.*}: failed logins per account and per client address, and
     * wrong admin tokens per client address; past the limit within the window every attempt (even a
     * right one) answers 429 until the lockout ends, and each further lockout is twice as long.
     *
     * @param maxFailures        failed logins per account within the window
     * @param addressMaxFailures failed logins, and wrong admin tokens, per client address within the window
     * @param window             failures older than this are forgotten
     * @param lockout            the first lockout; doubled for each further one
     * @param maxLockout         the longest lockout
     */
    public record Throttle(@Positive @DefaultValue("5") int maxFailures,
                           @Positive @DefaultValue("20") int addressMaxFailures,
                           @NotNull @DefaultValue("15m") Duration window,
                           @NotNull @DefaultValue("1m") Duration lockout,
                           @NotNull @DefaultValue("1h") Duration maxLockout) {
    }
}
