package dev.pagewarden.incident;

import dev.pagewarden.incident.disclosure.WebhookProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The guessing limits and webhook rules an operator gets without setting anything, bound as the application binds them. */
class SettingsDefaultsTest {
    private static Binder binder(Map<String, String> values) {
        return new Binder(new MapConfigurationPropertySource(values));
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        AdminProperties.Throttle t = binder(Map.of()).bindOrCreate("pagewarden.admin", AdminProperties.class).throttle();
        assertThat(t.maxFailures()).isEqualTo(5);
        assertThat(t.addressMaxFailures()).isEqualTo(20);
        assertThat(t.window()).isEqualTo(Duration.ofMinutes(15));
        assertThat(t.lockout()).isEqualTo(Duration.ofMinutes(1));
        assertThat(t.maxLockout()).isEqualTo(Duration.ofHours(1));
        dev.pagewarden.incident.report.ReportProperties r = binder(Map.of())
                .bindOrCreate("pagewarden.report", dev.pagewarden.incident.report.ReportProperties.class);
        assertThat(r.difficulty()).isEqualTo(20);
        assertThat(r.untriagedExpiry()).isEqualTo(Duration.ofDays(14));
        assertThat(r.submissionsPerHour()).isEqualTo(5);
        assertThat(r.lookupsPerMinute()).isEqualTo(30);
        assertThat(r.expiresAfter()).isEqualTo(Duration.ofDays(180));
        assertThat(r.challengeTtl()).isEqualTo(Duration.ofMinutes(10));
        assertThat(r.languages()).isEqualTo("en");
        assertThat(r.contacts()).isEmpty();
        assertThat(r.publicUrl()).isNull();
        WebhookProperties w = binder(Map.of()).bindOrCreate("pagewarden.webhooks", WebhookProperties.class);
        assertThat(w.allowHttp()).isFalse();
        assertThat(w.allowPrivateAddresses()).isFalse();
        assertThat(w.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(w.readTimeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void settingsBind() {
        Binder b = binder(Map.of("pagewarden.admin.throttle.max-failures", "3", "pagewarden.admin.throttle.lockout", "5m",
                "pagewarden.webhooks.allow-http", "true", "pagewarden.webhooks.allow-private-addresses", "true"));
        assertThat(b.bindOrCreate("pagewarden.admin", AdminProperties.class).throttle().maxFailures()).isEqualTo(3);
        assertThat(b.bindOrCreate("pagewarden.admin", AdminProperties.class).throttle().lockout()).isEqualTo(Duration.ofMinutes(5));
        WebhookProperties w = b.bindOrCreate("pagewarden.webhooks", WebhookProperties.class);
        assertThat(w.allowHttp()).isTrue();
        assertThat(w.allowPrivateAddresses()).isTrue();
    }
}
