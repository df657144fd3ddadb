package dev.pagewarden.db.evidence;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Test rows of admin_audit, each linked into its row chain in the transaction that inserts it (as the admin audit log does). */
final class ChainedAudit {
    private ChainedAudit() {
    }

    /** Inserts one admin_audit row and links it into {@code chains}; returns its id. */
    static long append(DataSource ds, RowChains chains, String actor, String action, String target) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            long id;
            try (PreparedStatement st = c.prepareStatement(
                    "INSERT INTO admin_audit (actor, action, target) VALUES (?, ?, ?) RETURNING id")) {
                st.setString(1, actor);
                st.setString(2, action);
                st.setString(3, target);
                try (ResultSet rs = st.executeQuery()) {
                    rs.next();
                    id = rs.getLong(1);
                }
            }
            chains.link(c, "admin_audit", id);
            c.commit();
            return id;
        }
    }
}
