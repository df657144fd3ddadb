package dev.pagewarden.adminui.web;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

class WhenTest {
    private static final Instant NOW = Instant.parse("2026-11-30T19:48:30Z");
    private final When when = new When(Clock.fixed(NOW, ZoneOffset.UTC), ZoneId.of("Europe/Berlin"));

    @Test
    void localTimeTodayWithHowLongAgo() {
        assertThat(when.at(Instant.parse("2026-11-30T19:36:30Z"))).isEqualTo("20:36:30 (12 min ago)");
    }

    @Test
    void anotherDayGetsItsDate() {
        assertThat(when.local(Instant.parse("2026-11-28T10:00:00Z"))).isEqualTo("2026-11-28 11:00:00");
        assertThat(when.ago(Instant.parse("2026-11-28T10:00:00Z"))).isEqualTo("2 d ago");
    }

    @Test
    void relativeUsesTheLargestWholeUnit() {
        assertThat(When.relative(Duration.ZERO)).isEqualTo("just now");
        assertThat(When.relative(Duration.ofSeconds(59))).isEqualTo("59 s ago");
        assertThat(When.relative(Duration.ofSeconds(60))).isEqualTo("1 min ago");
        assertThat(When.relative(Duration.ofMinutes(119))).isEqualTo("1 h ago");
        assertThat(When.relative(Duration.ofHours(25))).isEqualTo("1 d ago");
        assertThat(When.relative(Duration.ofSeconds(-90))).isEqualTo("in 1 min");
    }

    @Test
    void tagKeepsTheIsoInstantForMachinesAndHover() {
        assertThat(when.tag(Instant.parse("2026-11-30T19:36:30Z")))
                .isEqualTo("<time datetime=\"2026-11-30T19:36:30Z\" title=\"2026-11-30T19:36:30Z · shown in Europe/Berlin\">20:36:30 (12 min ago)</time>");
        assertThat(when.clockTag(Instant.parse("2026-11-30T19:36:30Z")))
                .isEqualTo("<time datetime=\"2026-11-30T19:36:30Z\" title=\"2026-11-30T19:36:30Z (12 min ago) · shown in Europe/Berlin\">20:36:30</time>");
        assertThat(when.tag(null)).isEmpty();
        assertThat(when.at(null)).isEmpty();
    }

    @Test
    void svgEscapesMarkup() {
        assertThat(Svg.escape("<a href=\"x\">'&'</a>")).isEqualTo("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        assertThat(Svg.num(12.0)).isEqualTo("12");
        assertThat(Svg.num(12.345)).isEqualTo("12.3");
    }
}
