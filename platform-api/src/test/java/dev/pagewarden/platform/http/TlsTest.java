package dev.pagewarden.platform.http;

import dev.pagewarden.platform.testing.PlatformTestBase;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Spring's {@code server.ssl.*} set (a self-signed key made for this run), the platform serves
 * HTTPS, every answer carries HSTS and the admin session cookie is Secure.
 */
class TlsTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    private static final String PASSWORD = "test-keystore-pass";
    private static final Path KEYSTORE = HOME.resolve("tls.p12");

    @DynamicPropertySource
    static void tls(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
        registry.add("server.ssl.enabled", () -> "true");
        registry.add("server.ssl.key-store", () -> selfSigned().toString());
        registry.add("server.ssl.key-store-type", () -> "PKCS12");
        registry.add("server.ssl.key-store-password", () -> PASSWORD);
    }

    /** A self-signed localhost key, made with the JDK's keytool. */
    private static synchronized Path selfSigned() {
        if (Files.exists(KEYSTORE)) {
            return KEYSTORE;
        }
        try {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                    "-genkeypair", "-alias", "pagewarden", "-keyalg", "EC", "-groupname", "secp256r1",
                    "-dname", "CN=localhost", "-ext", "san=dns:localhost,ip:127.0.0.1", "-validity", "2",
                    "-storetype", "PKCS12", "-keystore", KEYSTORE.toString(), "-storepass", PASSWORD)
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool failed: " + out);
            }
            return KEYSTORE;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("cannot make a test key", e);
        }
    }

    private HttpClient trustingTheTestKey() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(KEYSTORE)) {
            store.load(in, PASSWORD.toCharArray());
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, trust.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(20)).build();
    }

    @Test
    void servesHttpsWithHstsAndSecureSessionCookies() throws Exception {
        String base = "https://localhost:" + env.getProperty("local.server.port");
        HttpClient https = trustingTheTestKey();
        HttpResponse<String> api = https.send(HttpRequest.newBuilder(URI.create(base + "/v1/models"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(api.statusCode()).isEqualTo(401);
        assertThat(api.headers().firstValue("Strict-Transport-Security")).hasValueSatisfying(v -> assertThat(v).contains("max-age="));

        HttpResponse<String> login = https.send(HttpRequest.newBuilder(URI.create(base + "/admin/login"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(login.statusCode()).isEqualTo(200);
        assertThat(login.headers().firstValue("Strict-Transport-Security")).isPresent();
        assertThat(login.headers().firstValue("Set-Cookie")).hasValueSatisfying(c ->
                assertThat(c).startsWith("SESSION=").containsIgnoringCase("; Secure").contains("SameSite=Strict"));
    }
}
