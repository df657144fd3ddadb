package dev.pagewarden.adminui.incident;

import dev.pagewarden.adminui.names.Names;
import dev.pagewarden.db.audit.Exposure;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class ChartsTest {
    private static final Instant T = Instant.parse("2026-11-30T19:36:10Z");

    private static int count(String svg, String regex) {
        Matcher m = Pattern.compile(regex).matcher(svg);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static List<Integer> reads(String svg, String element) {
        Matcher m = Pattern.compile("<" + element + " class=\"[a-z-]+\" data-reads=\"(\\d+)\"").matcher(svg);
        List<Integer> out = new java.util.ArrayList<>();
        while (m.find()) {
            out.add(Integer.parseInt(m.group(1)));
        }
        return out;
    }

    @Test
    void oneBarPerMinuteWithReadsAndOneMarkerPerEvent() {
        // 3 reads in 19:36, none in 19:37, 1 in 19:38
        List<Instant> readTimes = List.of(T, T.plusSeconds(20), T.plusSeconds(40), T.plusSeconds(130));
        List<ExposureTimelineChart.Marker> markers = List.of(
                new ExposureTimelineChart.Marker(T.plusSeconds(5), ExposureTimelineChart.Marker.Kind.DETECTOR, "lineage-exposure"),
                new ExposureTimelineChart.Marker(T.plusSeconds(150), ExposureTimelineChart.Marker.Kind.ACTION,
                        "ops: model <b>x</b> made private"));
        String svg = ExposureTimelineChart.render("c", readTimes, markers, ZoneOffset.UTC);
        assertThat(reads(svg, "rect")).containsExactly(3, 1);
        assertThat(count(svg, "<g class=\"marker detector\">")).isEqualTo(1);
        assertThat(count(svg, "<g class=\"marker action\">")).isEqualTo(1);
        assertThat(svg).contains("<title>19:36: 3 exposed read(s)</title>").contains("<title>19:38: 1 exposed read(s)</title>")
                .contains("<desc id=\"c-desc\">4 exposed reads between 19:36 and 19:39 (Z), at most 3 per minute;"
                        + " 1 detector event(s) and 1 admin action(s) marked.</desc>")
                .contains("aria-labelledby=\"c-title c-desc\"");
        assertThat(svg).as("labels are escaped").contains("model &lt;b&gt;x&lt;/b&gt; made private").doesNotContain("<b>");
    }

    @Test
    void longWindowsGetWiderBucketsAndNeverMoreThanTheLimit() {
        assertThat(ExposureTimelineChart.bucketMinutes(10)).isEqualTo(1);
        assertThat(ExposureTimelineChart.bucketMinutes(200)).isEqualTo(5);
        assertThat(ExposureTimelineChart.bucketMinutes(60L * 24 * 400)).isGreaterThanOrEqualTo(1440);
        List<Instant> spread = List.of(T, T.plusSeconds(3 * 3600), T.plusSeconds(6 * 3600));
        String svg = ExposureTimelineChart.render("c", spread, List.of(), ZoneOffset.UTC);
        assertThat(reads(svg, "rect")).containsExactly(1, 1, 1);
        assertThat(svg).contains("per 5 minutes");
    }

    @Test
    void emptyChartSaysSo() {
        assertThat(ExposureTimelineChart.render("c", List.of(), List.of(), ZoneOffset.UTC))
                .contains("<desc id=\"c-desc\">No exposed reads and no events.</desc>").doesNotContain("<rect");
    }

    private static Exposure exposure(String exposed, String reader) {
        return new Exposure(exposed, 1, reader, 2, "node-a", "prefill-0", 3, 2, 1, 16, T, T);
    }

    @Test
    void matrixHasACellPerReaderAndExposedTenantWithNamesOnTheAxes() {
        Names names = new Names(Map.of("t_a", "Acme <Labs>", "t_b", "Beta", "t_c", "Cyan"), Map.of());
        List<Exposure> exposures = List.of(exposure("t_b", "t_a"), exposure("t_b", "t_a"), exposure("t_c", "t_a"),
                exposure("t_a", "t_b"));
        String svg = TenantMatrixChart.render("m", exposures, names);
        // rows: Acme, Beta (readers); columns: Acme, Beta, Cyan (exposed); row-major
        assertThat(reads(svg, "g")).containsExactly(0, 2, 1, 1, 0, 0);
        assertThat(count(svg, "<text class=\"row\"")).isEqualTo(2);
        assertThat(count(svg, "<text class=\"col\"")).isEqualTo(3);
        assertThat(svg).contains("Acme &lt;Labs&gt;").doesNotContain("<Labs>")
                .contains("<title>Acme &lt;Labs&gt; read data of Beta: 2 exposed read(s)</title>")
                .contains("Acme &lt;Labs&gt; read data of Beta: 2; Acme &lt;Labs&gt; read data of Cyan: 1; Beta read data of Acme &lt;Labs&gt;: 1; ")
                .contains("<title>Beta (t_b)</title>");
    }

    @Test
    void unknownTenantsShowTheirIds() {
        String svg = TenantMatrixChart.render("m", List.of(exposure("t_x", "t_y")), new Names(Map.of(), Map.of()));
        assertThat(svg).contains("t_y read data of t_x: 1");
    }
}
