package dev.pagewarden.platform.adminport;

import dev.pagewarden.platform.testing.PlatformTestBase;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A browser without JavaScript for the admin UI: keeps cookies, picks the CSRF token from the last
 * page it fetched and sends it with each form, never follows redirects (tests assert them).
 */
final class UiSession {
    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\"\\s+value=\"([^\"]+)\"");

    private final WebTestClient client;
    private final Map<String, String> cookies = new LinkedHashMap<>();
    private String csrf;

    UiSession(String baseUrl) {
        this.client = PlatformTestBase.client(baseUrl, Duration.ofSeconds(60));
    }

    EntityExchangeResult<String> get(String path) {
        EntityExchangeResult<String> r = client.get().uri(path).cookies(c -> cookies.forEach(c::add)).exchange()
                .expectBody(String.class).returnResult();
        remember(r);
        return r;
    }

    /** A GET as a browser asks for a page (Accept names text/html). */
    EntityExchangeResult<String> getPage(String path) {
        EntityExchangeResult<String> r = client.get().uri(path).accept(MediaType.TEXT_HTML, MediaType.ALL)
                .cookies(c -> cookies.forEach(c::add)).exchange().expectBody(String.class).returnResult();
        remember(r);
        return r;
    }

    EntityExchangeResult<String> post(String path, String... formPairs) {
        return post(path, true, formPairs);
    }

    EntityExchangeResult<String> post(String path, boolean withCsrf, String... formPairs) {
        return post(path, withCsrf, null, formPairs);
    }

    /** A form post as a browser sends it (Accept names text/html). */
    EntityExchangeResult<String> postPage(String path, String... formPairs) {
        return post(path, true, MediaType.TEXT_HTML, formPairs);
    }

    private EntityExchangeResult<String> post(String path, boolean withCsrf, MediaType accept, String... formPairs) {
        MultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        for (int i = 0; i < formPairs.length; i += 2) {
            form.add(formPairs[i], formPairs[i + 1]);
        }
        if (withCsrf && csrf != null) {
            form.add("_csrf", csrf);
        }
        EntityExchangeResult<String> r = client.post().uri(path).cookies(c -> cookies.forEach(c::add))
                .headers(h -> {
                    if (accept != null) {
                        h.setAccept(java.util.List.of(accept, MediaType.ALL));
                    }
                })
                .contentType(MediaType.APPLICATION_FORM_URLENCODED).body(BodyInserters.fromFormData(form)).exchange()
                .expectBody(String.class).returnResult();
        remember(r);
        return r;
    }

    /** A JSON call to the admin API riding on this session's cookie (and CSRF header). */
    WebTestClient.RequestBodySpec api(org.springframework.http.HttpMethod method, String path) {
        return client.method(method).uri(path).cookies(c -> cookies.forEach(c::add))
                .headers(h -> {
                    if (csrf != null) {
                        h.set("X-CSRF-TOKEN", csrf);
                    }
                });
    }

    UiSession login(String user, String password) {
        get("/admin/login");
        EntityExchangeResult<String> r = post("/admin/login", "username", user, "password", password);
        assertThat(r.getStatus().value()).as("login redirects").isEqualTo(302);
        assertThat(r.getResponseHeaders().getLocation()).as("login of " + user + " succeeded").hasToString("/admin");
        get("/admin"); // fresh CSRF token for the new session
        return this;
    }

    private void remember(EntityExchangeResult<String> r) {
        r.getResponseCookies().forEach((name, list) -> list.forEach(c -> {
            if (c.getMaxAge().isZero()) {
                cookies.remove(name);
            } else {
                cookies.put(name, c.getValue());
            }
        }));
        String body = r.getResponseBody();
        if (body != null) {
            Matcher m = CSRF.matcher(body);
            if (m.find()) {
                csrf = m.group(1);
            }
        }
    }

    /** The same browser (cookies, CSRF token) speaking to another address: another replica behind one name. */
    UiSession sameBrowserOn(String baseUrl) {
        UiSession other = new UiSession(baseUrl);
        other.cookies.putAll(cookies);
        other.csrf = csrf;
        return other;
    }

    /** The value of a cookie this browser holds, null when none. */
    String cookie(String name) {
        return cookies.get(name);
    }

    static String location(EntityExchangeResult<?> r) {
        return String.valueOf(r.getResponseHeaders().getFirst(HttpHeaders.LOCATION));
    }
}
