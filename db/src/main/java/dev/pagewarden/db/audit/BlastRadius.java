package dev.pagewarden.db.audit;

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
 */
public record BlastRadius(int affectedResponses, int deliveredResponses, Set<String> readerTenants,
                          Set<String> exposedTenants, List<AffectedResponse> responses) {

    /** @param status the request's status from {@code requests}, null if the platform has no row for it */
    public record AffectedResponse(long readerRequest, String readerTenant, String status, Set<String> exposedTenants,
                                   Set<Long> exposingRequests, int pages, int slots) {
        public boolean delivered() {
            return "FINISHED".equals(status);
        }
    }
}
