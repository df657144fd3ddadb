package dev.pagewarden.adminui;

import jakarta.validation.constraints.NotNull;
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
 */
@ConfigurationProperties("pagewarden.admin")
@Validated
public record AdminUiProperties(String initialPassword,
                                @NotNull @DefaultValue("30m") Duration sessionTimeout,
                                @NotNull @DefaultValue("10m") Duration incidentAttach,
                                @NotNull @DefaultValue("5m") Duration incidentLookback,
                                @DefaultValue("4") int webhookAttempts,
                                @NotNull @DefaultValue("1s") Duration webhookBackoff,
                                @NotNull @DefaultValue("60s") Duration lineageSweep) {
}
