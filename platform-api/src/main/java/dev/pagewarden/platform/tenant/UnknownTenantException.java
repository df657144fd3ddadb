package dev.pagewarden.platform.tenant;

/** An operator named a tenant or key that does not exist. */
public final class UnknownTenantException extends RuntimeException {
    public UnknownTenantException(String message) {
        super(message);
    }
}
