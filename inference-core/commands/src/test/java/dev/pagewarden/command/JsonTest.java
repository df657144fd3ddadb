package dev.pagewarden.command;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonTest {
    /** Six significant digits, always valid JSON: a value that rounds to a whole number loses its point too. */
    @Test
    void numbersAreValidJsonWithSixSignificantDigits() {
        assertThat(Json.write(1076.0003)).isEqualTo("1076");
        assertThat(Json.write(1076.5)).isEqualTo("1076.5");
        assertThat(Json.write(0.000123456789)).isEqualTo("0.000123457");
        assertThat(Json.write(123456789.5)).isEqualTo("123457000");
        assertThat(Json.write(1.0000001e-7)).isEqualTo("1E-7");
        assertThat(Json.write(123456.7f)).isEqualTo("123457");
        assertThat(Json.write(-2.5)).isEqualTo("-2.5");
        assertThat(Json.write(Double.NaN)).isEqualTo("null");
        for (double d : new double[] {1076.0003, 99.99999, 1.0000001e-7, 123456789.5, 0.1, -7.000001}) {
            assertThat((Double) Json.parse(Json.write(d))).as("%s", d).isCloseTo(d, org.assertj.core.data.Percentage.withPercentage(1e-3));
        }
    }

    @Test
    void writeThenParseRoundTrips() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("text", "a \"quoted\"\nline\t\\ \u0001");
        m.put("n", 3);
        m.put("x", 0.25);
        m.put("ok", true);
        m.put("none", null);
        m.put("list", List.of(1, "two"));
        Map<String, Object> expected = new LinkedHashMap<>(m);
        expected.put("n", 3.0);
        expected.put("list", List.of(1.0, "two"));
        Object back = Json.parse(Json.write(m));
        assertThat(back).isEqualTo(expected);
        assertThat(((Map<?, ?>) back).containsKey("none")).isTrue();
        assertThat(Json.parse("{\"choices\":[{\"text\":\"\\u00e9\\/\"}]}"))
                .isEqualTo(Map.of("choices", List.of(Map.of("text", "\u00e9/"))));
    }

    @Test
    void malformedInputNamesTheOffset() {
        assertThatThrownBy(() -> Json.parse("{\"a\":1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("malformed JSON at offset 6");
        assertThatThrownBy(() -> Json.parse("\"abc")).hasMessageContaining("malformed JSON at offset 4");
        assertThatThrownBy(() -> Json.parse("[1] x")).hasMessageContaining("malformed JSON at offset 4");
        assertThatThrownBy(() -> Json.parse("\"\\q\"")).hasMessageContaining("malformed JSON at offset 2")
                .hasMessageContaining("escape");
    }
}
