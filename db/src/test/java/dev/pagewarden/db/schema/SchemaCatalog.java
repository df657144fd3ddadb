package dev.pagewarden.db.schema;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What an application running against the {@code public} schema depends on, read from PostgreSQL's own catalog
 * (never from the migration text): relations, columns (type, nullability, default, identity/generated),
 * constraints, unique indexes not backing a constraint, and functions. Partitions are left out: they come
 * and go with retention, and they inherit their parent's columns.
 *
 * <p>{@link #contractions} compares two snapshots taken around a migration and names every change that a
 * replica of the previous release, still running against the migrated schema, could trip over.
 */
record SchemaCatalog(Map<String, String> relations, Map<String, Column> columns, Map<String, Constraint> constraints,
                     Map<String, String> uniqueIndexes, Map<String, String> functions) {

    /** {@code identity}: '' / 'a' (ALWAYS) / 'd' (BY DEFAULT); {@code generated}: '' / 's' (stored). */
    record Column(String type, boolean notNull, String defaultExpr, String identity, String generated) {
        boolean requiredOnInsert() {
            return notNull && defaultExpr == null && identity.isEmpty() && generated.isEmpty();
        }
    }

    /** {@code type}: pg_constraint.contype (c, f, p, u, x, t); {@code validated}: false for NOT VALID. */
    record Constraint(String table, String type, String definition, boolean validated) {
    }

    private static final String RELATIONS = """
            SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND NOT c.relispartition""";
    private static final String COLUMNS = """
            SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                   pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
              AND a.attnum > 0 AND NOT a.attisdropped""";
    // NOT NULL is a column property here (contype 'n' exists from PostgreSQL 18 on): columns carry it
    private static final String CONSTRAINTS = """
            SELECT c.relname, k.conname, k.contype::text, pg_get_constraintdef(k.oid), k.convalidated
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND NOT c.relispartition AND k.contype <> 'n'""";
    private static final String UNIQUE_INDEXES = """
            SELECT c.relname, i.relname, pg_get_indexdef(x.indexrelid)
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND x.indisunique AND NOT c.relispartition
              AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.contype IN ('p', 'u', 'x'))""";
    private static final String FUNCTIONS = """
            SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', pg_get_function_result(p.oid)
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'""";

    /** The catalog as {@code c} sees it now (inside its transaction, if one is open). */
    static SchemaCatalog read(Connection c) throws SQLException {
        Map<String, String> relations = new TreeMap<>();
        Map<String, Column> columns = new TreeMap<>();
        Map<String, Constraint> constraints = new TreeMap<>();
        Map<String, String> unique = new TreeMap<>();
        Map<String, String> functions = new TreeMap<>();
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(30);
            try (ResultSet rs = st.executeQuery(RELATIONS)) {
                while (rs.next()) {
                    relations.put(rs.getString(1), kind(rs.getString(2)));
                }
            }
            try (ResultSet rs = st.executeQuery(COLUMNS)) {
                while (rs.next()) {
                    columns.put(rs.getString(1) + "." + rs.getString(2), new Column(rs.getString(3), rs.getBoolean(4),
                            rs.getString(5), rs.getString(6), rs.getString(7)));
                }
            }
            try (ResultSet rs = st.executeQuery(CONSTRAINTS)) {
                while (rs.next()) {
                    constraints.put(rs.getString(1) + "." + rs.getString(2),
                            new Constraint(rs.getString(1), rs.getString(3), rs.getString(4), rs.getBoolean(5)));
                }
            }
            try (ResultSet rs = st.executeQuery(UNIQUE_INDEXES)) {
                while (rs.next()) {
                    unique.put(rs.getString(1) + "." + rs.getString(2), rs.getString(3));
                }
            }
            try (ResultSet rs = st.executeQuery(FUNCTIONS)) {
                while (rs.next()) {
                    functions.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return new SchemaCatalog(relations, columns, constraints, unique, functions);
    }

    private static String kind(String relkind) {
        return switch (relkind) {
            case "r", "p" -> "table"; // a table turned partitioned keeps its columns for its users
            case "v" -> "view";
            case "m" -> "materialized view";
            case "S" -> "sequence";
            case "f" -> "foreign table";
            default -> relkind;
        };
    }

    private static String table(String qualified) {
        return qualified.substring(0, qualified.indexOf('.'));
    }

    /**
     * What the step {@code before} -> {@code after} removed, narrowed or newly required of the objects the
     * previous release ({@code release}) knew: an empty list when a replica of that release keeps working.
     * Objects created after the release are free to change (no old replica uses them).
     */
    static List<String> contractions(SchemaCatalog release, SchemaCatalog before, SchemaCatalog after) {
        List<String> found = new ArrayList<>();
        for (var e : before.relations.entrySet()) {
            String name = e.getKey();
            if (!release.relations.containsKey(name)) {
                continue;
            }
            String now = after.relations.get(name);
            if (now == null) {
                found.add(e.getValue() + " " + name + " dropped or renamed");
            } else if (!now.equals(e.getValue())) {
                found.add(e.getValue() + " " + name + " turned into a " + now);
            }
        }
        for (var e : before.columns.entrySet()) {
            String col = e.getKey();
            Column was = e.getValue();
            if (!release.columns.containsKey(col) || !after.relations.containsKey(table(col))) {
                continue; // a dropped table is reported once, above
            }
            Column is = after.columns.get(col);
            if (is == null) {
                found.add("column " + col + " dropped or renamed");
                continue;
            }
            if (!is.type.equals(was.type)) {
                found.add("column " + col + " changed type from " + was.type + " to " + is.type);
            }
            if (is.notNull && !was.notNull) {
                found.add("column " + col + " made NOT NULL");
            }
            if (was.defaultExpr != null && is.defaultExpr == null) {
                found.add("column " + col + " lost its default " + was.defaultExpr);
            }
            if (!is.identity.equals(was.identity) || !is.generated.equals(was.generated)) {
                found.add("column " + col + " changed identity/generation from '" + was.identity + was.generated
                        + "' to '" + is.identity + is.generated + "'");
            }
        }
        for (var e : after.columns.entrySet()) {
            String col = e.getKey();
            if (!before.columns.containsKey(col) && release.relations.containsKey(table(col))
                    && before.relations.containsKey(table(col)) && e.getValue().requiredOnInsert()) {
                found.add("column " + col + " added NOT NULL without a default on existing table " + table(col));
            }
        }
        for (var e : before.constraints.entrySet()) {
            String name = e.getKey();
            if (!release.constraints.containsKey(name) || !after.relations.containsKey(e.getValue().table())) {
                continue;
            }
            Constraint is = after.constraints.get(name);
            if (is == null) {
                found.add("constraint " + name + " (" + e.getValue().definition() + ") dropped or renamed");
            } else if (!is.definition().equals(e.getValue().definition()) || !is.type().equals(e.getValue().type())) {
                found.add("constraint " + name + " changed from " + e.getValue().definition() + " to " + is.definition());
            }
        }
        for (var e : after.constraints.entrySet()) {
            Constraint k = e.getValue();
            if (before.constraints.containsKey(e.getKey()) || !release.relations.containsKey(k.table())
                    || !before.relations.containsKey(k.table())) {
                continue;
            }
            boolean notValid = !k.validated() && (k.type().equals("c") || k.type().equals("f"));
            if (!notValid) {
                found.add("constraint " + e.getKey() + " (" + k.definition() + ") added to existing table " + k.table()
                        + (k.type().equals("c") || k.type().equals("f") ? " without NOT VALID" : ""));
            }
        }
        for (var e : before.uniqueIndexes.entrySet()) {
            if (release.uniqueIndexes.containsKey(e.getKey()) && after.relations.containsKey(table(e.getKey()))
                    && !Objects.equals(after.uniqueIndexes.get(e.getKey()), e.getValue())) {
                found.add("unique index " + e.getKey() + " dropped or changed (an ON CONFLICT of the previous release may name it)");
            }
        }
        for (var e : after.uniqueIndexes.entrySet()) {
            String table = table(e.getKey());
            if (!before.uniqueIndexes.containsKey(e.getKey()) && release.relations.containsKey(table)
                    && before.relations.containsKey(table)) {
                found.add("unique index " + e.getKey() + " added to existing table " + table + ": " + e.getValue());
            }
        }
        for (var e : before.functions.entrySet()) {
            if (release.functions.containsKey(e.getKey()) && !Objects.equals(after.functions.get(e.getKey()), e.getValue())) {
                found.add("function " + e.getKey() + " dropped or its result changed");
            }
        }
        return found;
    }
}
