package dev.pagewarden.platform.evidence;

import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A tenant asking for evidence slices: an incident that concerns none of its requests answers exactly like a
 * missing one, and the slices a tenant may ask for are limited per minute.
 */
class EvidenceSliceGuardsTest extends PlatformTest {
    @Autowired
    IncidentService incidents;

    @Test
    void anUnconcernedIncidentAnswersLikeAMissingOneAndSlicesAreThrottled() {
        long existing = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", "n-slice", "decode-9", 7,
                "t_other", List.of(1), Instant.now(), "not this tenant's"));
        String key = newTenant("slice-bystander")[1];
        byte[] unconcerned = as(key).get().uri("/v1/evidence/incidents/" + existing).exchange().expectStatus().isNotFound()
                .expectBody().returnResult().getResponseBody();
        byte[] missing = as(key).get().uri("/v1/evidence/incidents/" + (existing + 1_000_000)).exchange()
                .expectStatus().isNotFound().expectBody().returnResult().getResponseBody();
        assertThat(new String(unconcerned)).isEqualTo(new String(missing)).contains("incident_not_found");
        for (int i = 2; i < EvidenceController.SLICES_PER_MINUTE; i++) {
            as(key).get().uri("/v1/evidence/incidents/" + existing).exchange().expectStatus().isNotFound();
        }
        as(key).get().uri("/v1/evidence/incidents/" + existing).exchange().expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After").expectBody().jsonPath("$.error.type").isEqualTo("rate_limit_error");
        // another tenant has its own allowance
        as(newTenant("slice-other")[1]).get().uri("/v1/evidence/incidents/" + existing).exchange().expectStatus().isNotFound();
    }
}
