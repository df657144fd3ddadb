package dev.pagewarden.platform.adminport;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.platform.testing.RawHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every route the running application maps - read from its handler mappings, so a new route is covered
 * without touching this test - called with malformed path segments, query parameters, bodies and headers,
 * each with the credentials the route wants (tenant key, admin token, admin UI session) and without any.
 * Nothing may answer 5xx or Spring's default error body, and nothing may log a stack trace or an error.
 */
class RouteFuzzTest extends AdminUiTest {
    /** Path segments: not numbers, out of range, encoded NUL, non-ASCII, a date, a huge negative. */
    private static final List<String> SEGMENTS = List.of("x", "-1", "99999999999999999999", "%00", "%C3%A9",
            "2026-01-01", "-99999999999999999999999");
    /** Query and form values. */
    private static final List<String> VALUES = List.of("x", "%00", "2026-01-01", "-99999999999999999999999",
            "%2B999999999-01-01T00:00:00Z", "-999999999-01-01T00:00:00Z", "99999999999999999999", "");
    /**
     * Field names the application's JSON and form bodies parse into numbers, times, ids and choices; each is
     * sent alone with each bad value, then all of them together.
     */
    private static final List<String> FIELDS = List.of("name", "from", "to", "reason", "max_concurrent",
            "tokens_per_minute", "requests_per_minute", "max_context", "model", "prompt", "messages", "max_tokens",
            "url", "window_from", "window_to", "request_ids", "status", "role", "private", "scenario");
    private static final List<String> JSON_VALUES = List.of("\"x\"", "-9223372036854775809", "{}",
            "\"+999999999-01-01T00:00:00Z\"");
    private static final List<String> FORM_VALUES = List.of("x", "%2B999999999-01-01T00:00:00Z", "%00");
    private static final List<String> RAW_BODIES = List.of("{", "[]", "null", "\"x\"", "{\"a\":", "\u00ff\u00fe");
    private static final Pattern VARIABLE = Pattern.compile("\\{[^}]+}");

    @Autowired
    ApplicationContext context;

    private final ConcurrentLinkedQueue<ILoggingEvent> logged = new ConcurrentLinkedQueue<>();
    private final AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent e) {
            if (e.getLevel().isGreaterOrEqual(Level.ERROR) || e.getThrowableProxy() != null) {
                logged.add(e);
            }
        }
    };
    private final List<String> failures = new ArrayList<>();
    private int calls;

    RouteFuzzTest() {
        super("fz-");
    }

    @BeforeEach
    void captureLog() {
        capture.start();
        root().addAppender(capture);
    }

    @AfterEach
    void releaseLog() {
        root().detachAppender(capture);
        capture.stop();
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }

    /** One mapped route: its pattern, method, the bodies it consumes, the query parameters it names. */
    record Route(String pattern, HttpMethod method, Set<MediaType> consumes, List<String> params) {
    }

    private List<Route> routes() {
        List<Route> out = new ArrayList<>();
        for (RequestMappingHandlerMapping mapping : context.getBeansOfType(RequestMappingHandlerMapping.class).values()) {
            for (Map.Entry<RequestMappingInfo, HandlerMethod> e : mapping.getHandlerMethods().entrySet()) {
                RequestMappingInfo info = e.getKey();
                List<String> params = new ArrayList<>();
                for (MethodParameter p : e.getValue().getMethodParameters()) {
                    RequestParam rp = p.getParameterAnnotation(RequestParam.class);
                    if (rp != null) {
                        String name = !rp.name().isEmpty() ? rp.name() : p.getParameterName();
                        if (name != null) {
                            params.add(name);
                        }
                    }
                }
                Set<RequestMethod> methods = info.getMethodsCondition().getMethods();
                for (RequestMethod m : methods.isEmpty() ? Set.of(RequestMethod.GET) : methods) {
                    for (var pattern : info.getPatternsCondition().getPatterns()) {
                        out.add(new Route(pattern.getPatternString(), m.asHttpMethod(),
                                info.getConsumesCondition().getConsumableMediaTypes(), params));
                    }
                }
            }
        }
        return out;
    }

    @Test
    void noRouteAnswers5xxOrLogsAStackTraceOnMalformedInput() {
        List<Route> routes = routes();
        // the controllers this test must see, so an empty enumeration cannot pass
        assertThat(routes).extracting(Route::pattern).contains("/.well-known/pagewarden-checkpoints", "/report",
                "/v1/chat/completions", "/admin/api/holds", "/admin/holds", "/status.json");
        String tenantKey = newTenant("fuzz")[1];
        UiSession ui = as(AdminRole.ADMIN);
        WebTestClient anonymous = client();
        WebTestClient tenant = as(tenantKey);
        WebTestClient admin = admin();

        for (Route route : routes) {
            Function<String, WebTestClient.RequestBodySpec> authorized;
            if (route.pattern().startsWith("/v1")) {
                authorized = uri -> tenant.method(route.method()).uri(URI.create(baseUrl() + uri));
            } else if (route.pattern().startsWith("/admin/api")) {
                authorized = uri -> admin.method(route.method()).uri(URI.create(baseUrl() + uri));
            } else if (route.pattern().startsWith("/admin")) {
                authorized = uri -> ui.api(route.method(), uri);
            } else {
                authorized = uri -> anonymous.method(route.method()).uri(URI.create(baseUrl() + uri));
            }
            for (String segment : route.pattern().contains("{") ? SEGMENTS : List.of("")) {
                String path = VARIABLE.matcher(route.pattern()).replaceAll(Matcher.quoteReplacement(segment));
                if (route.pattern().contains("/login") || route.pattern().contains("/logout")
                        || route.pattern().equals("/admin/api/receipt-keys/rotate")) {
                    continue; // signing in or out, or a rotation that needs no input: not input handling
                }
                call(route, path, anonymous.method(route.method()).uri(URI.create(baseUrl() + path)));
                call(route, path, authorized.apply(path));
                if (!segment.isEmpty() && !segment.equals("x")) {
                    continue; // the rest once per route, not once per path segment
                }
                call(route, path, authorized.apply(path).accept(MediaType.TEXT_HTML));
                call(route, path, authorized.apply(path).accept(MediaType.APPLICATION_XML));
                for (String param : route.params()) {
                    for (String value : VALUES) {
                        String uri = path + "?" + param + "=" + value;
                        call(route, uri, authorized.apply(uri));
                    }
                }
                if (route.method() == HttpMethod.GET) {
                    continue;
                }
                for (String raw : RAW_BODIES) {
                    for (MediaType type : List.of(MediaType.APPLICATION_JSON, MediaType.APPLICATION_FORM_URLENCODED)) {
                        call(route, path, authorized.apply(path).contentType(type)
                                .bodyValue(raw.getBytes(StandardCharsets.ISO_8859_1)));
                    }
                }
                call(route, path, authorized.apply(path).contentType(MediaType.TEXT_PLAIN).bodyValue("x"));
                for (String value : JSON_VALUES) {
                    StringJoiner all = new StringJoiner(",", "{", "}");
                    StringJoiner allForm = new StringJoiner("&");
                    for (String field : FIELDS) {
                        if (!value.startsWith("-")) { // a huge negative goes in the body of all fields only
                            call(route, path, authorized.apply(path).contentType(MediaType.APPLICATION_JSON)
                                    .bodyValue("{\"" + field + "\":" + value + "}"));
                        }
                        all.add("\"" + field + "\":" + value);
                        allForm.add(field + "=" + FORM_VALUES.get(Math.abs(value.hashCode()) % FORM_VALUES.size()));
                    }
                    call(route, path, authorized.apply(path).contentType(MediaType.APPLICATION_JSON).bodyValue(all.toString()));
                    call(route, path, authorized.apply(path).contentType(MediaType.APPLICATION_FORM_URLENCODED)
                            .bodyValue(allForm.toString()));
                }
                for (String field : FIELDS) {
                    for (String value : FORM_VALUES.subList(0, 1)) {
                        call(route, path, authorized.apply(path).contentType(MediaType.APPLICATION_FORM_URLENCODED)
                                .bodyValue(field + "=" + value));
                    }
                }
            }
        }
        // what the HTTP layer refuses before any route: a path too long, a header too large, a bad escape
        try (RawHttp raw = RawHttp.local(Integer.parseInt(env.getProperty("local.server.port")), Duration.ofSeconds(30))) {
            for (String target : List.of("/v1/models?x=" + "a".repeat(70_000), "/report?%ZZ", "/status.json?%ZZ=1",
                    "/.well-known/pagewarden-checkpoints?since=%ZZ")) {
                RawHttp.Response r = raw.get(target, "Connection: keep-alive");
                calls++;
                if (r.status() >= 500 || looksLikeSpringsDefault(r.body())) {
                    failures.add("GET " + target.substring(0, Math.min(60, target.length())) + " -> " + r.status() + " "
                            + r.body());
                }
                if (r.status() == 414 || "close".equalsIgnoreCase(r.header("connection"))) {
                    break; // the server may end the connection after such a refusal
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertThat(calls).isGreaterThan(routes.size() * 4);
        assertThat(failures).as("%d calls", calls).isEmpty();
        assertThat(logged).extracting(e -> e.getLevel() + " " + e.getLoggerName() + ": " + e.getFormattedMessage()
                + (e.getThrowableProxy() == null ? "" : " [" + e.getThrowableProxy().getClassName() + "]")).isEmpty();
    }

    /** Years past 9999 parse as ISO-8601 but overflow a timestamp: refused naming the field, not with the overflow. */
    @Test
    void timesBeyondYear9999AreRefusedNamingTheField() {
        admin().post().uri("/admin/api/holds").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("from", "+999999999-01-01T00:00:00Z", "to", "+999999999-06-01T00:00:00Z",
                        "reason", "far"))
                .exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("from")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("between the years 1 and 9999")
                        .doesNotContain("Exception"));
        admin().get().uri(URI.create(baseUrl() + "/admin/api/audit/verify?to=-999999999-01-01T00:00:00Z"))
                .exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("to")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).doesNotContain("Exception"));
        client().get().uri("/.well-known/pagewarden-checkpoints?since=x").exchange().expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.param").isEqualTo("since");
        assertThat(logged).isEmpty();
    }

    private void call(Route route, String uri, WebTestClient.RequestHeadersSpec<?> request) {
        calls++;
        EntityExchangeResult<byte[]> r = request.exchange().expectBody().returnResult();
        int status = r.getStatus().value();
        String body = r.getResponseBody() == null ? "" : new String(r.getResponseBody(), StandardCharsets.UTF_8);
        String what = route.method() + " " + uri + " " + r.getRequestHeaders().getContentType() + " "
                + (r.getRequestBodyContent() == null ? "" : new String(r.getRequestBodyContent(), StandardCharsets.UTF_8));
        if (status >= 500) {
            failures.add(what + " -> " + status + " " + body.substring(0, Math.min(200, body.length())));
        } else if (status >= 400 && looksLikeSpringsDefault(body)) {
            failures.add(what + " -> " + status + " with Spring's default error body: "
                    + body.substring(0, Math.min(200, body.length())));
        } else if (status >= 400 && !uri.startsWith("/admin/") && !uri.startsWith("/admin?")
                && MediaType.APPLICATION_JSON.isCompatibleWith(r.getResponseHeaders().getContentType())
                && !body.contains("\"error\":{")) {
            failures.add(what + " -> " + status + " JSON without the error object: " + body);
        }
    }

    /** Spring Boot's default error: the Whitelabel page, or its JSON (timestamp, path, status, error, requestId). */
    private static boolean looksLikeSpringsDefault(String body) {
        return body.contains("Whitelabel Error Page")
                || (body.contains("\"timestamp\"") && body.contains("\"path\"") && body.contains("\"requestId\""));
    }
}
