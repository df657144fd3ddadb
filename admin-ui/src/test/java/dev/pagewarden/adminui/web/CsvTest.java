package dev.pagewarden.adminui.web;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CsvTest {
    @Test
    void quotesWhatNeedsItAndEndsRowsWithCrLf() {
        String csv = new Csv("a", "b", "c").row("plain", "with, comma", "say \"hi\"").row(1, null, "two\nlines").toString();
        assertThat(csv).isEqualTo("a,b,c\r\nplain,\"with, comma\",\"say \"\"hi\"\"\"\r\n1,,\"two\nlines\"\r\n");
    }

    @Test
    void formulasAreDefused() {
        assertThat(Csv.field("=HYPERLINK(\"x\")")).isEqualTo("\"'=HYPERLINK(\"\"x\"\")\"");
        assertThat(Csv.field("+1")).isEqualTo("'+1");
        assertThat(Csv.field("@sum")).isEqualTo("'@sum");
    }

    @Test
    void downloadsAsTextCsvWithAFilename() {
        var response = new Csv("x").download("things.csv");
        assertThat(response.getHeaders().getContentType().toString()).isEqualTo("text/csv;charset=UTF-8");
        assertThat(response.getHeaders().getFirst("Content-Disposition")).isEqualTo("attachment; filename=\"things.csv\"");
        assertThat(response.getBody()).isEqualTo("x\r\n");
    }
}
