package dev.pagewarden.incident.disclosure;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PlaceholdersTest {
    @Test
    void findsTheTemplatesMarkersInOrder() {
        String body = """
                ## Cause
                _Describe the root cause._

                ## Remediation
                The model was taken out of service. _Describe the fix and how it was verified._
                """;
        assertThat(Placeholders.in(body)).containsExactly("_Describe the root cause._",
                "_Describe the fix and how it was verified._");
    }

    @Test
    void filledTextAndOtherItalicsAreNotPlaceholders() {
        assertThat(Placeholders.in("A capacity check was skipped. _Important:_ rotate keys.")).isEmpty();
        assertThat(Placeholders.in("the setting my_Describe_value stays")).isEmpty();
        assertThat(Placeholders.in("We Describe the root cause here.")).isEmpty();
        assertThat(Placeholders.in(null)).isEmpty();
    }
}
