package dev.pagewarden.platform.security;

import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;

/** A tenant API caller, authenticated by API key. */
final class TenantAuthentication extends AbstractAuthenticationToken {
    private final TenantPrincipal principal;

    TenantAuthentication(TenantPrincipal principal) {
        super(AuthorityUtils.createAuthorityList("ROLE_TENANT"));
        this.principal = principal;
        setAuthenticated(true);
    }

    @Override
    public Object getCredentials() {
        return "";
    }

    @Override
    public TenantPrincipal getPrincipal() {
        return principal;
    }
}
