package dev.pagewarden.adminui.users;

import java.time.Instant;

/** An operator of the admin UI (the password hash stays in the repository). */
public record AdminUser(long id, String username, AdminRole role, boolean enabled, Instant createdAt, String createdBy,
                        boolean mustChangePassword) {
}
