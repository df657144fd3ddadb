package dev.pagewarden.db.schema;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.journal.KindCodes;
import org.postgresql.PGConnection;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The previous release's write statements ({@code upgrade/previous-release-writers.sql}), run as its code ran
 * them: named parameters bound by name, positional ones in order, every statement with a timeout.
 */
public final class OldWriters {
    private static final Pattern BLOCK = Pattern.compile("(?m)^-- statement: (\\S+) .*$");
    private static final Pattern NAMED = Pattern.compile("(?<![:\\w]):(\\w+)");
    private static final int TIMEOUT_S = 30;
    private final Map<String, String> statements;

    private OldWriters(Map<String, String> statements) {
        this.statements = statements;
    }

    public static OldWriters load() {
        String text;
        try (InputStream in = OldWriters.class.getResourceAsStream("/upgrade/previous-release-writers.sql")) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = BLOCK.matcher(text);
        List<int[]> starts = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (m.find()) {
            starts.add(new int[] {m.start(), m.end()});
            names.add(m.group(1));
        }
        for (int i = 0; i < names.size(); i++) {
            int end = i + 1 < starts.size() ? starts.get(i + 1)[0] : text.length();
            out.put(names.get(i), text.substring(starts.get(i)[1], end).strip());
        }
        return new OldWriters(out);
    }

    /** The statement's text as stored. */
    public String sql(String name) {
        String s = statements.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no statement " + name + " in previous-release-writers.sql: " + statements.keySet());
        }
        return s;
    }

    /**
     * Runs statement {@code name}; {@code args}: name/value pairs for a statement with :names, values in order
     * for one with '?'. Returns the first column of the first row when it returns rows, else the update count.
     */
    public Object run(Connection c, String name, Object... args) throws SQLException {
        String sql = sql(name);
        List<Object> values = new ArrayList<>();
        Matcher m = NAMED.matcher(sql);
        StringBuilder jdbc = new StringBuilder();
        if (m.find()) {
            Map<String, Object> byName = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i += 2) {
                byName.put((String) args[i], args[i + 1]);
            }
            m.reset();
            while (m.find()) {
                if (!byName.containsKey(m.group(1))) {
                    throw new IllegalArgumentException(name + ": no value for :" + m.group(1));
                }
                values.add(byName.get(m.group(1)));
                m.appendReplacement(jdbc, "?");
            }
            m.appendTail(jdbc);
        } else {
            jdbc.append(sql);
            values.addAll(List.of(args));
        }
        try (PreparedStatement ps = c.prepareStatement(jdbc.toString())) {
            ps.setQueryTimeout(TIMEOUT_S);
            for (int i = 0; i < values.size(); i++) {
                ps.setObject(i + 1, jdbcValue(c, values.get(i)));
            }
            if (ps.execute()) {
                try (ResultSet rs = ps.getResultSet()) {
                    return rs.next() ? rs.getObject(1) : null;
                }
            }
            return ps.getUpdateCount();
        } catch (SQLException e) {
            throw new SQLException("the previous release's statement " + name + " failed: " + e.getMessage(), e.getSQLState(), e);
        }
    }

    /** Ships {@code events} the way the previous release's shipper did: partitions, staging table, binary COPY, insert. */
    public int shipLineage(Connection c, List<LineageEvent> events) throws SQLException {
        return shipLineage(c, lineageCopyStream(c, events), events);
    }

    /** As above with the stream made earlier ({@link #lineageCopyStream}, e.g. on the previous release's schema). */
    public int shipLineage(Connection c, byte[] copyStream, List<LineageEvent> events) throws SQLException {
        List<String> partitionDays = events.stream()
                .map(e -> Instant.EPOCH.plus(e.timeMicros(), ChronoUnit.MICROS).atOffset(java.time.ZoneOffset.UTC).toLocalDate().toString())
                .distinct().toList();
        try (var st = c.createStatement()) {
            st.setQueryTimeout(TIMEOUT_S);
            st.execute(sql("lineage.stage"));
            for (String day : partitionDays) {
                String next = java.time.LocalDate.parse(day).plusDays(1).toString();
                st.execute(sql("lineage.partition").replace("{name}", "kv_lineage_p" + day.replace("-", ""))
                        .replace("{from}", day).replace("{to}", next));
            }
        }
        c.setAutoCommit(false);
        try {
            c.unwrap(PGConnection.class).getCopyAPI().copyIn(sql("lineage.copy"), new java.io.ByteArrayInputStream(copyStream));
            int rows = ((Number) run(c, "lineage.insert")).intValue();
            c.commit();
            return rows;
        } catch (IOException e) {
            c.rollback();
            throw new UncheckedIOException(e);
        } finally {
            c.setAutoCommit(true);
        }
    }

    /** What the previous release's shipper put in each COPY column, by column name. */
    private static final Map<String, Function<LineageEvent, Object>> LINEAGE_FIELDS = Map.ofEntries(
            Map.entry("event_id", LineageEvent::id),
            Map.entry("event_time", e -> Instant.EPOCH.plus(e.timeMicros(), ChronoUnit.MICROS)),
            Map.entry("kind", e -> KindCodes.code(e.kind())),
            Map.entry("node", LineageEvent::node), Map.entry("worker", LineageEvent::worker), Map.entry("page", LineageEvent::page),
            Map.entry("epoch", LineageEvent::epoch), Map.entry("request_id", LineageEvent::requestId),
            Map.entry("tenant_id", LineageEvent::tenant), Map.entry("slot_from", LineageEvent::slotFrom),
            Map.entry("slot_to", LineageEvent::slotTo), Map.entry("peer_worker", LineageEvent::peerWorker),
            Map.entry("peer_page", LineageEvent::peerPage), Map.entry("peer_epoch", LineageEvent::peerEpoch),
            Map.entry("generation", LineageEvent::generation), Map.entry("checksum", LineageEvent::checksum),
            Map.entry("ok", LineageEvent::ok));

    /**
     * {@code events} as the previous release's shipper streamed them: binary COPY of the columns its
     * {@code lineage.copy} statement names, in that order, each in its column's binary form (PostgreSQL writes
     * the stream from the rows, so it does not depend on today's encoder).
     */
    public byte[] lineageCopyStream(Connection c, List<LineageEvent> events) throws SQLException {
        String copy = sql("lineage.copy");
        String columns = copy.substring(copy.indexOf('(') + 1, copy.indexOf(')'));
        List<Function<LineageEvent, Object>> fields = new ArrayList<>();
        for (String col : columns.split(",")) {
            Function<LineageEvent, Object> f = LINEAGE_FIELDS.get(col.strip());
            if (f == null) {
                throw new IllegalStateException("lineage.copy names column " + col.strip() + ", which no LineageEvent field gives");
            }
            fields.add(f);
        }
        StringBuilder csv = new StringBuilder();
        for (LineageEvent e : events) {
            for (int i = 0; i < fields.size(); i++) {
                Object v = fields.get(i).apply(e);
                csv.append(i == 0 ? "" : ",").append(v == null ? "" : "\"" + v.toString().replace("\"", "\"\"") + "\"");
            }
            csv.append('\n');
        }
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (var st = c.createStatement()) {
            st.setQueryTimeout(TIMEOUT_S);
            st.execute("CREATE TEMP TABLE old_copy_rows (LIKE kv_lineage) ON COMMIT DROP");
            var api = c.unwrap(PGConnection.class).getCopyAPI();
            api.copyIn("COPY old_copy_rows (" + columns + ") FROM STDIN (FORMAT csv)",
                    new java.io.StringReader(csv.toString()));
            var out = new java.io.ByteArrayOutputStream();
            api.copyOut("COPY (SELECT " + columns + " FROM old_copy_rows ORDER BY event_id) TO STDOUT (FORMAT binary)", out);
            c.commit();
            return out.toByteArray();
        } catch (IOException e) {
            c.rollback();
            throw new UncheckedIOException(e);
        } finally {
            c.setAutoCommit(auto);
        }
    }

    private static Object jdbcValue(Connection c, Object v) throws SQLException {
        return switch (v) {
            case Instant i -> Timestamp.from(i);
            case int[] a -> array(c, "integer", java.util.Arrays.stream(a).boxed().toArray());
            case long[] a -> array(c, "bigint", java.util.Arrays.stream(a).boxed().toArray());
            case null, default -> v;
        };
    }

    private static Array array(Connection c, String type, Object[] values) throws SQLException {
        return c.createArrayOf(type, values);
    }
}
