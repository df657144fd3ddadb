package dev.pagewarden.platform.http;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * What the HTTP server grants one client ({@code pagewarden.http.*}): a request's headers must be
 * complete within {@code headerTimeout} of its first byte, its body within {@code bodyTimeout} of
 * its headers (then the connection closes; the body is read as the handler asks for it, so the time
 * before the handler starts reading counts too); a connection waiting for a request closes after {@code idleTimeout};
 * headers over {@code maxHeaderSize} are refused; one client address may hold at most
 * {@code maxConnectionsPerAddress} connections at once (0 = no cap). None of these limits a response:
 * a stream keeps its connection while tokens flow.
 */
@ConfigurationProperties("pagewarden.http")
@Validated
public record HttpLimits(@NotNull @DefaultValue("10s") Duration headerTimeout,
                         @NotNull @DefaultValue("30s") Duration bodyTimeout,
                         @NotNull @DefaultValue("60s") Duration idleTimeout,
                         @NotNull @DefaultValue("16KB") DataSize maxHeaderSize,
                         @Min(0) @DefaultValue("64") int maxConnectionsPerAddress) {
}
