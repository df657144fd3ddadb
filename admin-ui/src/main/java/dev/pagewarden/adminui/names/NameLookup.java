package dev.pagewarden.adminui.names;

import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Looks up the names of the tenants and requests a page shows (blocking: call it off the event loop). */
@Service
public class NameLookup {
    private final JdbcClient jdbc;

    NameLookup(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public Names of(Collection<String> tenantIds, Collection<Long> requestIds) {
        Map<String, String> tenants = new HashMap<>();
        if (!tenantIds.isEmpty()) {
            jdbc.sql("SELECT id, display_name FROM tenants WHERE id IN (:ids)").param("ids", List.copyOf(tenantIds))
                    .query((RowCallbackHandler) rs -> tenants.put(rs.getString(1), rs.getString(2)));
        }
        Map<Long, String> responses = new HashMap<>();
        if (!requestIds.isEmpty()) {
            jdbc.sql("SELECT id, public_id, public_prefix FROM requests WHERE id IN (:ids) AND public_id IS NOT NULL")
                    .param("ids", List.copyOf(requestIds))
                    .query((RowCallbackHandler) rs -> responses.put(rs.getLong(1), Names.shown(rs.getString(3), rs.getString(2))));
        }
        return new Names(tenants, responses);
    }
}
