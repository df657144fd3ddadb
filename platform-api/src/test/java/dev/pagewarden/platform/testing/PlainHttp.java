package dev.pagewarden.platform.testing;

import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A plain HTTP client for tests that start a platform of their own (outside Spring's test context):
 * bearer-authenticated JSON calls and the first-tenant set-up an operator does by hand.
 */
public final class PlainHttp {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient http = HttpClient.newHttpClient();
    private final String base;

    public PlainHttp(String base) {
        this.base = base;
    }

    public HttpRequest post(String path, String bearer, String json) {
        return HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + bearer)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build();
    }

    public HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    public CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> get(String path, String bearer) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        return send(b.build());
    }

    /** Creates a tenant and one key through the admin API; returns the key. */
    public String newTenantKey(String adminToken, String name) throws IOException, InterruptedException {
        String tenant = (String) JSON.readValue(send(post("/admin/api/tenants", adminToken,
                JSON.writeValueAsString(Map.of("name", name)))).body(), Map.class).get("id");
        return (String) JSON.readValue(send(post("/admin/api/tenants/" + tenant + "/keys", adminToken, "{}")).body(),
                Map.class).get("key");
    }
}
