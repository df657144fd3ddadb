package dev.pagewarden.cli.bench;

import java.util.Locale;
import java.util.Map;

/**
 * Draws a bench report as an SVG bar chart: decode tokens/s per batch size, against the ceiling that
 * the measured memory bandwidth puts on a weight-streaming decoder (batch x bandwidth / weight bytes).
 */
public final class BenchPlot {
    private BenchPlot() {
    }

    @SuppressWarnings("unchecked")
    public static String svg(Map<String, Object> report) {
        Map<String, Object> decode = (Map<String, Object>) report.get("decode_tok_s");
        // the CPU backend's ceiling; a device backend's report has no host probe, so no ceiling is drawn
        double bw = report.get("mem_read_gbs") instanceof Number gbs ? gbs.doubleValue() * 1e9 : Double.NaN;
        boolean ceilings = Double.isFinite(bw);
        double weights = ((Number) report.get("weight_bytes_per_token")).doubleValue();
        int n = decode.size();
        double max = 0;
        for (Map.Entry<String, Object> e : decode.entrySet()) {
            double ceiling = ceilings ? Integer.parseInt(e.getKey()) * bw / weights : 0;
            max = Math.max(max, Math.max(((Number) e.getValue()).doubleValue(), ceiling));
        }
        int w = Math.max(620, 120 + 140 * n);
        int h = 360;
        int top = 50;
        int base = h - 50;
        double scale = (base - top) / (max * 1.1);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"13\">%n", w, h));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", w, h));
        sb.append(String.format(Locale.ROOT, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Decode tokens/s, %s "
                + "(%s, %s threads)</text>%n", report.get("model"), report.get("backend"), report.get("threads")));
        sb.append(ceilings
                ? String.format(Locale.ROOT, "<text x=\"10\" y=\"40\" fill=\"#555\">bars: measured; dashes: bandwidth ceiling "
                        + "(%.1f GB/s, %.0f MB of weights per step)</text>%n", bw / 1e9, weights / 1e6)
                : String.format(Locale.ROOT, "<text x=\"10\" y=\"40\" fill=\"#555\">bars: measured (%.0f MB of weights per "
                        + "step; no host-memory ceiling for this backend)</text>%n", weights / 1e6));
        sb.append(String.format(Locale.ROOT, "<line x1=\"60\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>%n", base, w - 20, base));
        int i = 0;
        for (Map.Entry<String, Object> e : decode.entrySet()) {
            double v = ((Number) e.getValue()).doubleValue();
            int x = 90 + 140 * i;
            int bh = (int) Math.round(v * scale);
            sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"70\" height=\"%d\" fill=\"#3b7dd8\"/>%n",
                    x, base - bh, bh));
            if (ceilings) {
                int cy = (int) Math.round(base - Integer.parseInt(e.getKey()) * bw / weights * scale);
                sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d83b3b\" "
                        + "stroke-width=\"2\" stroke-dasharray=\"6,4\"/>%n", x - 10, cy, x + 80, cy));
            }
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"white\" "
                    + "font-weight=\"bold\">%.1f</text>%n", x + 35, base - bh + 17, v));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">batch %s</text>%n",
                    x + 35, base + 20, e.getKey()));
            i++;
        }
        sb.append("</svg>\n");
        return sb.toString();
    }
}
