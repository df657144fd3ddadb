package dev.pagewarden.platform;

import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import javax.sql.DataSource;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * OpenAI's x-ratelimit-* headers on every authenticated tenant answer, from the tenant's limits as the limiter sees
 * them; and the admin usage totals per time bucket, which must equal the request rows the API wrote.
 */
class RateLimitsAndUsageTest extends PlatformTest {
    private static final Pattern RESET = Pattern.compile("0s|[1-9][0-9]{0,2}ms|([1-9][0-9]*m)?[0-9]+(\\.[0-9]{1,3})?s");

    @Autowired
    DataSource dataSource;

    private void setLimits(String tenant, Map<String, Object> limits) {
        admin().put().uri("/admin/api/tenants/" + tenant + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(limits).exchange().expectStatus().isOk();
    }

    private static Map<String, Object> chat(int maxTokens, boolean stream) {
        return Map.of("model", MODEL, "max_tokens", maxTokens, "temperature", 0, "stream", stream,
                "messages", List.of(Map.of("role", "user", "content", "Tell me about a dog.")));
    }

    private static long header(HttpHeaders h, String name) {
        assertThat(h.getFirst(name)).as(name).isNotNull();
        return Long.parseLong(h.getFirst(name));
    }

    @Test
    void everyAuthenticatedAnswerCarriesTheLimiterState() {
        String[] t = newTenant("limited");
        setLimits(t[0], Map.of("requests_per_minute", 3, "tokens_per_minute", 5000));
        EntityExchangeResult<Map> first = as(t[1]).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(chat(10, false)).exchange().expectStatus().isOk().expectBody(Map.class).returnResult();
        HttpHeaders h = first.getResponseHeaders();
        Map<?, ?> usage = (Map<?, ?>) first.getResponseBody().get("usage");
        long used = ((Number) usage.get("total_tokens")).longValue();
        assertThat(header(h, "x-ratelimit-limit-requests")).isEqualTo(3);
        assertThat(header(h, "x-ratelimit-remaining-requests")).isEqualTo(2);
        assertThat(h.getFirst("x-ratelimit-reset-requests")).matches(RESET).isNotEqualTo("0s");
        assertThat(header(h, "x-ratelimit-limit-tokens")).isEqualTo(5000);
        // charged prompt + max_tokens, the unused part given back when it finished: what is left is what it used
        // (plus what refilled in the meantime, at 5000 a minute)
        assertThat(header(h, "x-ratelimit-remaining-tokens")).isBetween(5000 - used, 5000L);
        assertThat(h.getFirst("x-ratelimit-reset-tokens")).matches(RESET);

        // a stream, a listing and a refused request say it too; the third request takes the last one
        HttpHeaders streamed = as(t[1]).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(chat(5, true)).exchange().expectStatus().isOk().returnResult(String.class).getResponseHeaders();
        assertThat(header(streamed, "x-ratelimit-remaining-requests")).isEqualTo(1);
        HttpHeaders models = as(t[1]).get().uri("/v1/models").exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseHeaders();
        assertThat(header(models, "x-ratelimit-limit-requests")).isEqualTo(3);
        assertThat(header(models, "x-ratelimit-remaining-requests")).isBetween(1L, 3L);
        HttpHeaders bad = as(t[1]).post().uri("/v1/responses").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "input", "x", "store", true)).exchange().expectStatus().isBadRequest()
                .returnResult(String.class).getResponseHeaders();
        assertThat(header(bad, "x-ratelimit-limit-requests")).isEqualTo(3);
        as(t[1]).post().uri("/v1/responses").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "input", "x", "max_output_tokens", 2)).exchange().expectStatus().isOk()
                .expectHeader().valueEquals("x-ratelimit-remaining-requests", "0");
        HttpHeaders refused = as(t[1]).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(chat(5, false)).exchange().expectStatus().isEqualTo(429)
                .returnResult(String.class).getResponseHeaders();
        assertThat(header(refused, "x-ratelimit-limit-requests")).isEqualTo(3);
        assertThat(header(refused, "x-ratelimit-remaining-requests")).isZero();
        assertThat(refused.getFirst("x-ratelimit-reset-requests")).matches(RESET).isNotEqualTo("0s");
        assertThat(refused.getFirst("Retry-After")).isNotNull();

        // unauthenticated: no tenant, no headers
        HttpHeaders anonymous = client().get().uri("/v1/models").exchange().expectStatus().isUnauthorized()
                .returnResult(String.class).getResponseHeaders();
        assertThat(anonymous.headerNames()).noneMatch(k -> k.toLowerCase().startsWith("x-ratelimit"));
    }

    @Test
    void aLimitTheTenantDoesNotHaveSendsNoHeaders() {
        String[] t = newTenant("tokens-only"); // new tenants start with a tokens-per-minute limit and no request limit
        HttpHeaders h = as(t[1]).get().uri("/v1/models").exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseHeaders();
        assertThat(h.getFirst("x-ratelimit-limit-tokens")).isNotNull();
        assertThat(h.getFirst("x-ratelimit-limit-requests")).isNull();
        assertThat(h.getFirst("x-ratelimit-remaining-requests")).isNull();
        assertThat(h.getFirst("x-ratelimit-reset-requests")).isNull();

        String[] free = newTenant("unlimited");
        setLimits(free[0], Map.of());
        HttpHeaders none = as(free[1]).get().uri("/v1/models").exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseHeaders();
        assertThat(none.headerNames()).noneMatch(k -> k.toLowerCase().startsWith("x-ratelimit"));
    }

    @Test
    void usageTotalsMatchTheRequestRows() throws Exception {
        Instant from = Instant.now().minus(1, ChronoUnit.MINUTES);
        String[] t = newTenant("metered");
        long prompt = 0;
        long completion = 0;
        for (Map<?, ?> usage : List.of(
                post(t[1], "/v1/completions", Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 7,
                        "temperature", 0)),
                post(t[1], "/v1/chat/completions", chat(5, false)),
                post(t[1], "/v1/responses", Map.of("model", MODEL, "input", "Hello", "max_output_tokens", 4,
                        "temperature", 0)))) {
            // chat and completions say prompt/completion_tokens, responses input/output_tokens
            prompt += ((Number) (usage.containsKey("prompt_tokens") ? usage.get("prompt_tokens")
                    : usage.get("input_tokens"))).longValue();
            completion += ((Number) (usage.containsKey("completion_tokens") ? usage.get("completion_tokens")
                    : usage.get("output_tokens"))).longValue();
        }
        assertThat(completion).isEqualTo(16);
        Instant to = Instant.now().plus(1, ChronoUnit.MINUTES);
        String query = "/admin/api/tenants/" + t[0] + "/usage?from=" + from + "&to=" + to;

        Map<?, ?> minutes = awaitUsage(query + "&granularity=minute", 3);
        Map<?, ?> totals = (Map<?, ?>) minutes.get("totals");
        assertThat(((Number) totals.get("prompt_tokens")).longValue()).isEqualTo(prompt);
        assertThat(((Number) totals.get("completion_tokens")).longValue()).isEqualTo(completion);
        Map<String, Object> rows = new JdbcTemplate(dataSource).queryForMap("SELECT count(*) AS n, sum(prompt_tokens) AS p,"
                + " sum(generated_tokens) AS c FROM requests WHERE tenant_id = ?", t[0]);
        assertThat(((Number) totals.get("requests")).longValue()).isEqualTo(((Number) rows.get("n")).longValue());
        assertThat(((Number) totals.get("prompt_tokens")).longValue()).isEqualTo(((Number) rows.get("p")).longValue());
        assertThat(((Number) totals.get("completion_tokens")).longValue()).isEqualTo(((Number) rows.get("c")).longValue());
        List<?> data = (List<?>) minutes.get("data");
        assertThat(data).hasSizeBetween(2, 4); // every minute of the range, whole UTC minutes
        long summed = data.stream().mapToLong(b -> ((Number) ((Map<?, ?>) b).get("requests")).longValue()).sum();
        assertThat(summed).isEqualTo(3);
        Map<?, ?> firstBucket = (Map<?, ?>) data.getFirst();
        assertThat(Instant.parse((String) firstBucket.get("start"))).isEqualTo(from.truncatedTo(ChronoUnit.MINUTES));

        Map<?, ?> days = admin().get().uri(query + "&granularity=day").exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(days.get("totals")).isEqualTo(totals);
        // another tenant's rows are not counted
        String other = newTenant("quiet")[0];
        Map<?, ?> quiet = admin().get().uri("/admin/api/tenants/" + other + "/usage?from=" + from + "&granularity=hour")
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        assertThat(((Map<?, ?>) quiet.get("totals")).get("requests")).isEqualTo(0);
    }

    @Test
    void usageParametersAreCheckedAndTheTenantMustExist() {
        String tenant = newTenant("usage-params")[0];
        String base = "/admin/api/tenants/" + tenant + "/usage";
        String[][] cases = {
                {"?to=2026-01-02T00:00:00Z", "from"},
                {"?from=yesterday", "from"},
                {"?from=-999999999-01-01T00:00:00Z", "from"},
                {"?from=2026-01-01T00:00:00Z&to=+999999999-12-31T00:00:00Z", "to"},
                {"?from=2026-01-01T00:00:00Z&to=2025-12-31T00:00:00Z", "to"},
                {"?from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", "to"},
                {"?from=2026-01-01T00:00:00Z&to=nope", "to"},
                {"?from=2026-01-01T00:00:00Z&granularity=week", "granularity"},
                {"?from=2026-01-01T00:00:00Z&to=2026-01-03T00:00:00Z&granularity=minute", "to"},
        };
        for (String[] c : cases) {
            admin().get().uri(base + c[0]).exchange().expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error.param").isEqualTo(c[1]);
        }
        Map<?, ?> hours = admin().get().uri(base + "?from=2026-01-01T10:30:00Z&to=2026-01-01T12:10:00Z&granularity=hour")
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        assertThat(((List<?>) hours.get("data")).stream().map(b -> (String) ((Map<?, ?>) b).get("start")).toList())
                .containsExactly("2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z");
        admin().get().uri("/admin/api/tenants/no-such-tenant/usage?from=2026-01-01T00:00:00Z").exchange()
                .expectStatus().isNotFound();
        client().get().uri(base + "?from=2026-01-01T00:00:00Z").exchange().expectStatus().isUnauthorized();
    }

    private Map<?, ?> post(String key, String uri, Map<String, Object> body) {
        Map<?, ?> answer = as(key).post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        return (Map<?, ?>) answer.get("usage");
    }

    /** The rows are written as each answer leaves (briefly awaited there, retried in the background if slow). */
    private Map<?, ?> awaitUsage(String uri, long requests) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Map<?, ?> usage = admin().get().uri(uri).exchange().expectStatus().isOk().expectBody(Map.class)
                    .returnResult().getResponseBody();
            long n = ((Number) ((Map<?, ?>) usage.get("totals")).get("requests")).longValue();
            if (n >= requests || System.nanoTime() > deadline) {
                assertThat(n).isEqualTo(requests);
                return usage;
            }
            Thread.sleep(50);
        }
    }
}
