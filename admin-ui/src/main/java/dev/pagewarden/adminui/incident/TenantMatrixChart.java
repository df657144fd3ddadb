package dev.pagewarden.adminui.incident;

import dev.pagewarden.adminui.names.Names;
import dev.pagewarden.adminui.web.Svg;
import dev.pagewarden.db.audit.Exposure;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Who read whose data: one row per reader tenant, one column per exposed tenant, each cell the number of
 * exposed reads (page reads of the column tenant's data by the row tenant's requests), as server-side SVG.
 * Its text alternative is the title and a desc listing every non-empty cell; each cell has its own title.
 */
final class TenantMatrixChart {
    static final int CELL = 30;
    private static final int MARGIN = 12;
    private static final int MAX_LABEL = 22;
    /** Roughly the width of one character of the 11px labels. */
    private static final double CHAR_W = 6.5;

    private TenantMatrixChart() {
    }

    static String render(String id, List<Exposure> exposures, Names names) {
        Map<String, Map<String, Integer>> counts = new HashMap<>();
        for (Exposure e : exposures) {
            counts.computeIfAbsent(e.readerTenant(), k -> new HashMap<>()).merge(e.exposedTenant(), 1, Integer::sum);
        }
        Comparator<String> byName = Comparator.comparing(names::tenant).thenComparing(Comparator.naturalOrder());
        List<String> rows = counts.keySet().stream().sorted(byName).toList();
        List<String> cols = counts.values().stream().flatMap(m -> m.keySet().stream()).distinct().sorted(byName).toList();
        int max = counts.values().stream().flatMap(m -> m.values().stream()).max(Integer::compare).orElse(0);
        // room for the longest row label on the left, and for the longest column label (at 45 degrees) above and right
        int labelW = (int) (CHAR_W * longest(rows, names)) + MARGIN;
        int labelH = (int) (CHAR_W * longest(cols, names) * 0.71) + MARGIN;
        int width = labelW + cols.size() * CELL + Math.max(MARGIN, labelH - CELL / 2);
        int height = labelH + rows.size() * CELL + MARGIN;
        StringBuilder svg = new StringBuilder(4096);
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"").append(id).append("\" viewBox=\"0 0 ")
                .append(width).append(' ').append(height).append("\" width=\"").append(width).append("\" role=\"img\" aria-labelledby=\"")
                .append(id).append("-title ").append(id).append("-desc\"><title id=\"").append(id)
                .append("-title\">Exposed reads by reader tenant (rows) and exposed tenant (columns)</title><desc id=\"").append(id)
                .append("-desc\">");
        if (rows.isEmpty()) {
            svg.append("No tenant read another tenant's data.");
        }
        for (String r : rows) {
            for (String c : cols) {
                Integer n = counts.get(r).get(c);
                if (n != null) {
                    svg.append(Svg.escape(names.tenant(r) + " read data of " + names.tenant(c) + ": " + n + "; "));
                }
            }
        }
        svg.append("</desc>");
        for (int j = 0; j < cols.size(); j++) {
            double x = labelW + j * CELL + CELL / 2.0;
            svg.append("<text class=\"col\" x=\"").append(Svg.num(x)).append("\" y=\"").append(labelH - 6)
                    .append("\" transform=\"rotate(-45 ").append(Svg.num(x)).append(' ').append(labelH - 6)
                    .append(")\" font-size=\"11\" fill=\"#333\">");
            label(svg, cols.get(j), names);
            svg.append("</text>");
        }
        for (int i = 0; i < rows.size(); i++) {
            int y = labelH + i * CELL;
            svg.append("<text class=\"row\" x=\"").append(labelW - 6).append("\" y=\"").append(y + CELL / 2 + 4)
                    .append("\" text-anchor=\"end\" font-size=\"11\" fill=\"#333\">");
            label(svg, rows.get(i), names);
            svg.append("</text>");
            for (int j = 0; j < cols.size(); j++) {
                Integer n = counts.get(rows.get(i)).get(cols.get(j));
                int x = labelW + j * CELL;
                String what = names.tenant(rows.get(i)) + " read data of " + names.tenant(cols.get(j)) + ": "
                        + (n == null ? "none" : n + " exposed read(s)");
                svg.append("<g class=\"matrix-cell\" data-reads=\"").append(n == null ? 0 : n).append("\"><title>").append(Svg.escape(what))
                        .append("</title><rect x=\"").append(x + 1).append("\" y=\"").append(y + 1).append("\" width=\"")
                        .append(CELL - 2).append("\" height=\"").append(CELL - 2).append("\" fill=\"");
                if (n == null) {
                    svg.append("#f2f2f2\"/>");
                } else {
                    svg.append("#c0392b\" fill-opacity=\"").append(Svg.num(0.2 + 0.8 * n / max)).append("\"/><text x=\"")
                            .append(x + CELL / 2).append("\" y=\"").append(y + CELL / 2 + 4)
                            .append("\" text-anchor=\"middle\" font-size=\"11\" fill=\"#000\">").append(n).append("</text>");
                }
                svg.append("</g>");
            }
        }
        return svg.append("</svg>").toString();
    }

    private static int longest(List<String> tenants, Names names) {
        return tenants.stream().mapToInt(t -> Math.min(MAX_LABEL, names.tenant(t).length())).max().orElse(0);
    }

    /** The tenant's name, shortened to fit; the full name and the id on hover. */
    private static void label(StringBuilder svg, String tenant, Names names) {
        String name = names.tenant(tenant);
        String shown = name.length() > MAX_LABEL ? name.substring(0, MAX_LABEL - 1) + "…" : name;
        svg.append("<title>").append(Svg.escape(name + " (" + tenant + ")")).append("</title>").append(Svg.escape(shown));
    }
}
