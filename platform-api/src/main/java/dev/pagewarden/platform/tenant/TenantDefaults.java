package dev.pagewarden.platform.tenant;

import jakarta.validation.constraints.Min;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The limits a new tenant starts with ({@code pagewarden.tenants.max-concurrent}, {@code ...tokens-per-minute}),
 * so that no tenant can fill the engine before an admin has set its limits. An admin may change or clear them.
 */
@ConfigurationProperties("pagewarden.tenants")
@Validated
public record TenantDefaults(@Min(1) @DefaultValue("8") int maxConcurrent,
                             @Min(1) @DefaultValue("100000") int tokensPerMinute) {

    TenantLimits limits() {
        return new TenantLimits(null, tokensPerMinute, maxConcurrent, null);
    }
}
