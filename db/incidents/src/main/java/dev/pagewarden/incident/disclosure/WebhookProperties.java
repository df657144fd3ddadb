package dev.pagewarden.incident.disclosure;

import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * {@code pagewarden.webhooks.*}: where tenant webhooks may point and how long a delivery may take.
 *
 * @param allowHttp              accept plain {@code http://} webhooks (otherwise https only)
 * @param allowPrivateAddresses  accept loopback, private and link-local targets (local setups and tests only)
 * @param connectTimeout         connecting to the receiver (DNS included)
 * @param readTimeout            the receiver's whole answer, after the request is sent
 */
@ConfigurationProperties("pagewarden.webhooks")
@Validated
public record WebhookProperties(boolean allowHttp,
                                boolean allowPrivateAddresses,
                                @NotNull @DefaultValue("5s") Duration connectTimeout,
                                @NotNull @DefaultValue("10s") Duration readTimeout) {
}
