package dev.pagewarden.platform.security;

import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;

/** A bearer token as presented, before it is checked. */
final class PresentedKey extends AbstractAuthenticationToken {
    private final String key;

    PresentedKey(String key) {
        super(AuthorityUtils.NO_AUTHORITIES);
        this.key = key;
    }

    @Override
    public Object getCredentials() {
        return key;
    }

    @Override
    public Object getPrincipal() {
        return "bearer";
    }

    String key() {
        return key;
    }
}
