package dev.pagewarden.adminui.incident;

import dev.pagewarden.adminui.web.Svg;
import dev.pagewarden.incident.incident.Incident;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Exposed reads per minute (or per wider bucket when the incident is long) as an SVG bar chart, with a vertical
 * marker for each detector event and admin action. Built on the server: the page needs no script to show it.
 * Its text alternative is the SVG's title and desc; each bar and marker carries its own title.
 */
final class ExposureTimelineChart {
    /** A timeline entry drawn over the bars. */
    record Marker(Instant at, Kind kind, String label) {
        enum Kind { DETECTOR, ACTION }
    }

    static final int WIDTH = 720;
    static final int HEIGHT = 200;
    /** At most this many bars: a longer window gets wider buckets. */
    static final int MAX_BUCKETS = 90;
    private static final int[] BUCKET_MINUTES = {1, 2, 5, 10, 15, 30, 60, 120, 360, 720, 1440};
    private static final int LEFT = 44;
    private static final int RIGHT = 12;
    private static final int TOP = 14;
    private static final int BOTTOM = 40;
    private static final String BAR = "#d9822b";
    private static final String DETECTOR = "#c0392b";
    private static final String ACTION = "#2f6fb0";

    private ExposureTimelineChart() {
    }

    /** {@code id} prefixes the element ids, so two charts on one page do not share them. */
    static String render(String id, List<Instant> reads, List<Marker> markers, ZoneId zone) {
        String title = "Exposed reads over time";
        StringBuilder svg = new StringBuilder(4096);
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"").append(id)
                .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
                .append("\" role=\"img\" aria-labelledby=\"").append(id).append("-title ").append(id).append("-desc\">")
                .append("<title id=\"").append(id).append("-title\">").append(title).append("</title>");
        List<Instant> all = Stream.concat(reads.stream(), markers.stream().map(Marker::at)).sorted().toList();
        if (all.isEmpty()) {
            return svg.append("<desc id=\"").append(id).append("-desc\">No exposed reads and no events.</desc>")
                    .append("<text x=\"").append(WIDTH / 2).append("\" y=\"").append(HEIGHT / 2)
                    .append("\" text-anchor=\"middle\" fill=\"#666\">No exposed reads</text></svg>").toString();
        }
        long spanMinutes = Duration.between(all.getFirst(), all.getLast()).toMinutes() + 1;
        long bucket = bucketMinutes(spanMinutes);
        long bucketSeconds = bucket * 60;
        long startSecond = Math.floorDiv(all.getFirst().getEpochSecond(), bucketSeconds) * bucketSeconds;
        int n = (int) ((all.getLast().getEpochSecond() - startSecond) / bucketSeconds) + 1;
        int[] counts = new int[n];
        for (Instant r : reads) {
            counts[(int) ((r.getEpochSecond() - startSecond) / bucketSeconds)]++;
        }
        int max = 0;
        for (int c : counts) {
            max = Math.max(max, c);
        }
        Instant start = Instant.ofEpochSecond(startSecond);
        Instant end = start.plusSeconds(n * bucketSeconds);
        boolean oneDay = start.atZone(zone).toLocalDate().equals(end.minusSeconds(1).atZone(zone).toLocalDate());
        DateTimeFormatter label = DateTimeFormatter.ofPattern(oneDay ? "HH:mm" : "MM-dd HH:mm").withZone(zone);
        String per = bucket == 1 ? "minute" : bucket + " minutes";
        long detectors = markers.stream().filter(m -> m.kind() == Marker.Kind.DETECTOR).count();
        svg.append("<desc id=\"").append(id).append("-desc\">").append(reads.size()).append(" exposed reads between ")
                .append(label.format(start)).append(" and ").append(label.format(end)).append(" (").append(zone)
                .append("), at most ").append(max).append(" per ").append(per).append("; ").append(detectors)
                .append(" detector event(s) and ").append(markers.size() - detectors).append(" admin action(s) marked.</desc>");

        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        double bw = plotW / n;
        double baseline = TOP + plotH;
        // a bar covers its whole bucket, so markers fall on the bar of the minute they happened in
        double barW = Math.max(1, bw * 0.9);
        for (int i = 0; i < n; i++) {
            if (counts[i] == 0) {
                continue;
            }
            double h = plotH * counts[i] / max;
            Instant from = start.plusSeconds(i * bucketSeconds);
            svg.append("<rect class=\"read-bar\" data-reads=\"").append(counts[i]).append("\" x=\"").append(Svg.num(LEFT + i * bw + (bw - barW) / 2))
                    .append("\" y=\"").append(Svg.num(baseline - h)).append("\" width=\"").append(Svg.num(barW))
                    .append("\" height=\"").append(Svg.num(h)).append("\" fill=\"").append(BAR).append("\"><title>")
                    .append(label.format(from)).append(": ").append(counts[i]).append(" exposed read(s)</title></rect>");
        }
        double spanSeconds = n * bucketSeconds;
        for (Marker m : markers) {
            double x = LEFT + plotW * (m.at().getEpochSecond() - startSecond) / spanSeconds;
            String colour = switch (m.kind()) {
                case DETECTOR -> DETECTOR;
                case ACTION -> ACTION;
            };
            String kind = m.kind().name().toLowerCase(java.util.Locale.ROOT);
            svg.append("<g class=\"marker ").append(kind).append("\"><title>")
                    .append(Svg.escape(DateTimeFormatter.ofPattern("HH:mm:ss").withZone(zone).format(m.at()) + " " + kind + ": " + m.label()))
                    .append("</title><line x1=\"").append(Svg.num(x)).append("\" x2=\"").append(Svg.num(x)).append("\" y1=\"").append(TOP)
                    .append("\" y2=\"").append(Svg.num(baseline)).append("\" stroke=\"").append(colour).append("\" stroke-width=\"2\"")
                    .append(m.kind() == Marker.Kind.DETECTOR ? " stroke-dasharray=\"4 3\"" : "").append("/><circle cx=\"")
                    .append(Svg.num(x)).append("\" cy=\"").append(TOP).append("\" r=\"4\" fill=\"").append(colour).append("\"/></g>");
        }
        // axes and labels
        svg.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - RIGHT).append("\" y1=\"").append(Svg.num(baseline))
                .append("\" y2=\"").append(Svg.num(baseline)).append("\" stroke=\"#888\"/>");
        text(svg, LEFT - 4, TOP + 4, "end", Integer.toString(max));
        text(svg, LEFT - 4, baseline, "end", "0");
        text(svg, LEFT, baseline + 14, "start", label.format(start));
        text(svg, WIDTH - RIGHT, baseline + 14, "end", label.format(end));
        text(svg, LEFT, HEIGHT - 6, "start", "bars: exposed reads per " + per + " · dashed red: detector events · blue: admin actions");
        return svg.append("</svg>").toString();
    }

    private static void text(StringBuilder svg, double x, double y, String anchor, String s) {
        svg.append("<text x=\"").append(Svg.num(x)).append("\" y=\"").append(Svg.num(y)).append("\" text-anchor=\"").append(anchor)
                .append("\" font-size=\"11\" fill=\"#555\">").append(Svg.escape(s)).append("</text>");
    }

    /** The narrowest bucket that keeps the span within {@link #MAX_BUCKETS} bars (whole days beyond that). */
    static long bucketMinutes(long spanMinutes) {
        for (int b : BUCKET_MINUTES) {
            // one more bucket than the span may be needed when the span does not start on a bucket boundary
            if (spanMinutes / b + 1 <= MAX_BUCKETS) {
                return b;
            }
        }
        long days = Math.ceilDiv(spanMinutes, 1440L * (MAX_BUCKETS - 1));
        return days * 1440;
    }

    /** Markers from the parts of the timeline that are events and actions (notes are not drawn). */
    static List<Marker> markers(List<Incident.Entry> timeline) {
        List<Marker> out = new ArrayList<>();
        for (var e : timeline) {
            switch (e.kind()) {
                case "DETECTOR" -> out.add(new Marker(e.at(), Marker.Kind.DETECTOR, e.text()));
                case "ACTION" -> out.add(new Marker(e.at(), Marker.Kind.ACTION, e.actor() + ": " + e.text()));
                default -> {
                }
            }
        }
        return out;
    }
}
