package dev.pagewarden.adminui.web;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/** CSV as RFC 4180 writes it (CRLF rows, quoted fields where needed), safe to open in a spreadsheet. */
public final class Csv {
    private final StringBuilder out = new StringBuilder();

    public Csv(String... header) {
        row((Object[]) header);
    }

    /** One row; null fields are empty. */
    public Csv row(Object... fields) {
        for (int i = 0; i < fields.length; i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(field(fields[i] == null ? null : fields[i].toString()));
        }
        out.append("\r\n");
        return this;
    }

    @Override
    public String toString() {
        return out.toString();
    }

    /** The download: text/csv in UTF-8, saved as {@code filename}. */
    public ResponseEntity<String> download(String filename) {
        return ResponseEntity.ok().contentType(MediaType.parseMediaType("text/csv;charset=UTF-8"))
                .header(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"" + filename + "\"").body(toString());
    }

    static String field(String s) {
        if (s == null) {
            return "";
        }
        // a leading =,+,-,@ would be a formula in a spreadsheet: prefix it
        String safe = !s.isEmpty() && "=+-@".indexOf(s.charAt(0)) >= 0 ? "'" + s : s;
        return safe.contains(",") || safe.contains("\"") || safe.contains("\n") || safe.contains("\r")
                ? "\"" + safe.replace("\"", "\"\"") + "\"" : safe;
    }
}
