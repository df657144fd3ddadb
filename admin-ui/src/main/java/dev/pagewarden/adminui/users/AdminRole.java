package dev.pagewarden.adminui.users;

import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Cumulative roles: each includes every role before it (an admin may also publish, respond and view). */
public enum AdminRole {
    VIEWER, RESPONDER, PUBLISHER, ADMIN;

    public List<GrantedAuthority> authorities() {
        List<GrantedAuthority> out = new ArrayList<>();
        for (AdminRole r : values()) {
            if (r.ordinal() <= ordinal()) {
                out.add(new SimpleGrantedAuthority("ROLE_" + r.name()));
            }
        }
        return out;
    }

    public static AdminRole parse(String value) {
        if (value == null) {
            throw new IllegalArgumentException("role is required: one of viewer, responder, publisher, admin");
        }
        try {
            return valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown role '" + value + "': one of viewer, responder, publisher, admin");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
