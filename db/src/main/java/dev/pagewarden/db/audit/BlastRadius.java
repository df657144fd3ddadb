package dev.pagewarden.db.audit;

import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * The answer to "did it happen to us, to whom, which responses": counts computed from lineage, not estimated.
 *
 * @param affectedResponses  requests that read another tenant's data
 * @param deliveredResponses of those, how many finished and were delivered (the rest were stopped, e.g. by a detector)
 * @param readerTenants      tenants who received foreign data
 * @param exposedTenants     tenants whose data was read by others
 * @param responses          one line per affected request
 * @param firstExposedRead   the earliest exposed read of those responses (null when there is none): where the
 *                           exposure began, which the search window (it reaches back before detection) does not say
 * @param lastExposedRead    the latest exposed read of those responses (null when there is none)
 */
public record BlastRadius(int affectedResponses, int deliveredResponses, Set<String> readerTenants,
                          Set<String> exposedTenants, List<AffectedResponse> responses, Instant firstExposedRead,
                          Instant lastExposedRead) {

    /** Whether the request is one of the affected responses or one whose data they read. */
    public boolean covers(long request) {
        return responses.stream().anyMatch(r -> r.readerRequest() == request || r.exposingRequests().contains(request));
    }

    /** @param status the request's status from {@code requests}, null if the platform has no row for it */
    public record AffectedResponse(long readerRequest, String readerTenant, String status, Set<String> exposedTenants,
                                   Set<Long> exposingRequests, int pages, int slots) {
        public boolean delivered() {
            return "FINISHED".equals(status);
        }
    }
}
