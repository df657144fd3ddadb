package dev.pagewarden.platform.http;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.platform.testing.PlatformTest;
import dev.pagewarden.platform.testing.RawHttp;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One keep-alive connection carrying an unknown admin path and then an admin page, many times:
 * every request gets its full answer on the same connection.
 */
class KeepAliveTest extends PlatformTest {
    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\"\\s+value=\"([^\"]+)\"");
    private static final Pattern SESSION = Pattern.compile("SESSION=([^;]+)");

    @Autowired
    AdminUserService users;

    @Test
    void unknownAdminPathThenAdminPageOnOneConnection() throws IOException {
        if (users.findByName("ka-viewer").isEmpty()) {
            users.create("ka-viewer", "correct-horse-battery", AdminRole.VIEWER, "test");
        }
        int port = Integer.parseInt(env.getProperty("local.server.port"));
        try (RawHttp http = RawHttp.local(port, Duration.ofSeconds(20))) {
            String cookie = login(http);
            for (int i = 0; i < 80; i++) {
                RawHttp.Response missing = http.get("/admin/nonexistent", "Cookie: " + cookie);
                assertThat(missing.status()).as("round %d: unknown admin path", i).isEqualTo(404);
                RawHttp.Response page = http.get("/admin", "Cookie: " + cookie);
                assertThat(page.status()).as("round %d: admin page", i).isEqualTo(200);
                assertThat(page.body()).as("round %d", i).contains("</html>");
            }
        }
    }

    private static String login(RawHttp http) throws IOException {
        RawHttp.Response form = http.get("/admin/login");
        Matcher session = SESSION.matcher(form.header("set-cookie"));
        Matcher csrf = CSRF.matcher(form.body());
        assertThat(session.find() && csrf.find()).as("login form with session and CSRF token").isTrue();
        RawHttp.Response done = http.post("/admin/login", "application/x-www-form-urlencoded",
                "username=ka-viewer&password=correct-horse-battery&_csrf=" + URLEncoder.encode(csrf.group(1), StandardCharsets.UTF_8),
                "Cookie: SESSION=" + session.group(1));
        assertThat(done.status()).isEqualTo(302);
        assertThat(done.header("location")).isEqualTo("/admin");
        Matcher fresh = SESSION.matcher(done.header("set-cookie"));
        assertThat(fresh.find()).isTrue();
        return "SESSION=" + fresh.group(1);
    }
}
