package dev.pagewarden.platform.admin;

import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.tenant.TenantService;
import dev.pagewarden.platform.tenant.UnknownTenantException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code GET /admin/api/tenants/{id}/usage?from=&to=&granularity=minute|hour|day}: a tenant's requests and tokens per
 * time bucket, summed in PostgreSQL from its {@code requests} rows (every row the API wrote, whatever its status;
 * refused ones count their prompt and no completion), by the time each was received. Buckets are whole UTC minutes,
 * hours or days; every bucket of the range is listed, empty ones with zeros; rows count from {@code from} (inclusive)
 * to {@code to} (exclusive), so the first and last bucket may be partial. {@code cached_tokens} appears when the
 * {@code requests} table has that column.
 */
@RestController
class TenantUsageController {
    /** The most buckets one answer holds: a day of minutes, two months of hours, four years of days. */
    static final int MAX_BUCKETS = 1500;
    /** The times a bound may name: what PostgreSQL's timestamps and the bucket arithmetic hold with room to spare. */
    static final Instant EARLIEST = Instant.parse("1970-01-01T00:00:00Z");
    static final Instant LATEST = Instant.parse("9999-12-31T00:00:00Z");

    private final TenantService tenants;
    private final JdbcClient jdbc;

    TenantUsageController(TenantService tenants, DataSource dataSource) {
        this.tenants = tenants;
        JdbcTemplate template = new JdbcTemplate(dataSource);
        template.setQueryTimeout(10);
        this.jdbc = JdbcClient.create(template);
    }

    enum Granularity {
        MINUTE(ChronoUnit.MINUTES), HOUR(ChronoUnit.HOURS), DAY(ChronoUnit.DAYS);

        final ChronoUnit unit;

        Granularity(ChronoUnit unit) {
            this.unit = unit;
        }

        String interval() {
            return "1 " + name().toLowerCase(Locale.ROOT);
        }
    }

    @GetMapping("/admin/api/tenants/{id}/usage")
    Mono<Map<String, Object>> usage(@PathVariable String id, @RequestParam(required = false) String from,
                                    @RequestParam(required = false) String to,
                                    @RequestParam(required = false) String granularity) {
        Granularity g = granularity(granularity);
        Instant start = time("from", from, null);
        Instant end = time("to", to, Instant.now());
        if (!end.isAfter(start)) {
            throw ApiException.invalid("to", "'to' (" + end + ") must be after 'from' (" + start + ")");
        }
        Instant first = start.truncatedTo(g.unit);
        long step = g.unit.getDuration().getSeconds();
        long buckets = (Duration.between(first, end).getSeconds() + step - 1) / step;
        if (buckets > MAX_BUCKETS) {
            throw ApiException.invalid("to", "the range from " + start + " to " + end + " holds " + buckets + " "
                    + g.name().toLowerCase(Locale.ROOT) + " buckets; at most " + MAX_BUCKETS
                    + " are answered: shorten it or choose a coarser granularity");
        }
        return Mono.fromCallable(() -> {
            tenants.get(id);
            return answer(id, start, end, g, first);
        }).subscribeOn(Schedulers.boundedElastic())
                .onErrorMap(UnknownTenantException.class, e -> ApiException.notFound(null, "not_found", e.getMessage()));
    }

    private Map<String, Object> answer(String tenant, Instant start, Instant end, Granularity g, Instant first) {
        boolean cached = jdbc.sql("SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = "
                        + "current_schema() AND table_name = 'requests' AND column_name = 'cached_tokens')")
                .query(Boolean.class).single();
        // date_bin from the epoch: the same UTC-aligned starts as Instant.truncatedTo above
        Map<Instant, long[]> rows = new TreeMap<>();
        jdbc.sql("SELECT date_bin(CAST(:step AS interval), received_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS bucket, "
                        + "count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(generated_tokens), 0), "
                        + (cached ? "coalesce(sum(cached_tokens), 0)" : "0")
                        + " FROM requests WHERE tenant_id = :tenant AND received_at >= :from AND received_at < :to "
                        + "GROUP BY bucket ORDER BY bucket")
                .param("step", g.interval()).param("tenant", tenant)
                .param("from", start.atOffset(ZoneOffset.UTC)).param("to", end.atOffset(ZoneOffset.UTC))
                .query(rs -> {
                    rows.put(rs.getObject(1, OffsetDateTime.class).toInstant(), new long[]{rs.getLong(2), rs.getLong(3), rs.getLong(4),
                            rs.getLong(5)});
                });
        List<Map<String, Object>> data = new ArrayList<>();
        long[] totals = new long[4];
        for (Instant b = first; b.isBefore(end); b = b.plus(1, g.unit)) {
            long[] r = rows.getOrDefault(b, new long[4]);
            for (int i = 0; i < 4; i++) {
                totals[i] += r[i];
            }
            Map<String, Object> bucket = new LinkedHashMap<>();
            bucket.put("start", b);
            bucket.put("end", b.plus(1, g.unit));
            put(bucket, r, cached);
            data.add(bucket);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("object", "tenant.usage");
        out.put("tenant_id", tenant);
        out.put("from", start);
        out.put("to", end);
        out.put("granularity", g.name().toLowerCase(Locale.ROOT));
        Map<String, Object> total = new LinkedHashMap<>();
        put(total, totals, cached);
        out.put("totals", total);
        out.put("data", data);
        return out;
    }

    private static void put(Map<String, Object> into, long[] sums, boolean cached) {
        into.put("requests", sums[0]);
        into.put("prompt_tokens", sums[1]);
        into.put("completion_tokens", sums[2]);
        if (cached) {
            into.put("cached_tokens", sums[3]);
        }
    }

    private static Granularity granularity(String value) {
        if (value == null) {
            return Granularity.DAY;
        }
        for (Granularity g : Granularity.values()) {
            if (g.name().equalsIgnoreCase(value)) {
                return g;
            }
        }
        throw ApiException.invalid("granularity", "'granularity' must be minute, hour or day, got '" + value + "'");
    }

    /** An ISO-8601 instant ({@code 2026-01-31T12:00:00Z}, or with an offset); required when there is no default. */
    private static Instant time(String name, String value, Instant dflt) {
        if (value == null || value.isBlank()) {
            if (dflt == null) {
                throw ApiException.invalid(name, "'" + name + "' is required: an ISO-8601 instant such as "
                        + "2026-01-31T12:00:00Z");
            }
            return dflt;
        }
        Instant t;
        try {
            t = OffsetDateTime.parse(value.strip()).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiException.invalid(name, "'" + name + "' must be an ISO-8601 instant such as 2026-01-31T12:00:00Z,"
                    + " got '" + value + "'");
        }
        if (t.isBefore(EARLIEST) || t.isAfter(LATEST)) {
            throw ApiException.invalid(name, "'" + name + "' must lie between " + EARLIEST + " and " + LATEST
                    + ", got " + t);
        }
        return t;
    }
}
