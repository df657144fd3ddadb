package dev.pagewarden.incident.incident;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IncidentFilterTest {
    @Test
    void blankParametersFilterNothingAndSortNewestFirst() {
        IncidentFilter f = IncidentFilter.of("", " ", "", null, null, "  ", null, null);
        assertThat(f).isEqualTo(IncidentFilter.NONE);
    }

    @Test
    void parametersAreReadCaseInsensitively() {
        IncidentFilter f = IncidentFilter.of("Investigating", "critical", " t_a ", null, null, "owner", "last-event", "asc");
        assertThat(f.status()).isEqualTo(Incident.Status.INVESTIGATING);
        assertThat(f.severity()).isEqualTo("CRITICAL");
        assertThat(f.tenant()).isEqualTo("t_a");
        assertThat(f.sort()).isEqualTo(IncidentFilter.Sort.LAST_EVENT);
        assertThat(f.descending()).isFalse();
        assertThat(IncidentFilter.of(null, null, null, null, null, null, "title", null).descending())
                .as("titles read A to Z unless asked otherwise").isFalse();
    }

    @Test
    void unknownValuesAreRefusedWithTheChoices() {
        assertThatThrownBy(() -> IncidentFilter.of("open", null, null, null, null, null, null, null))
                .hasMessageContaining("unknown status 'open'").hasMessageContaining("investigating");
        assertThatThrownBy(() -> IncidentFilter.of(null, "high", null, null, null, null, null, null))
                .hasMessageContaining("unknown severity 'high'");
        assertThatThrownBy(() -> IncidentFilter.of(null, null, null, null, null, null, "id; DROP TABLE incidents", null))
                .hasMessageContaining("unknown sort");
        Instant t = Instant.parse("2026-11-30T05:00:00Z");
        assertThatThrownBy(() -> IncidentFilter.of(null, null, null, t, t, null, null, null)).hasMessageContaining("'to' must be after 'from'");
    }

    @Test
    void sortLabelsRoundTrip() {
        for (IncidentFilter.Sort s : IncidentFilter.Sort.values()) {
            assertThat(IncidentFilter.of(null, null, null, null, null, null, s.label(), null).sort()).isEqualTo(s);
        }
    }
}
