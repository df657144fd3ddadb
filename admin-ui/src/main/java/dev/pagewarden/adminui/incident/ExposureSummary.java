package dev.pagewarden.adminui.incident;

import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.incident.incident.Incident;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;

/**
 * The incident in one line: how many responses of how many tenants read data of how many tenants (the blast
 * radius counts), when the first and last exposed reads happened (the blast radius's exposure window, the one
 * the header and the disclosure state), and since
 * when the model has been private.
 *
 * @param reads        exposed reads (page reads of another tenant's data) behind the affected responses
 * @param privateSince when the model was last made private, null while it is public
 */
record ExposureSummary(int responses, int readerTenants, int exposedTenants, int reads, Instant firstRead, Instant lastRead,
                       Instant privateSince) {

    /** {@code exposures}: the lineage rows of the radius's responses only. */
    static ExposureSummary of(BlastRadius radius, List<Exposure> exposures, List<Incident.Entry> timeline, boolean modelPrivate) {
        Instant since = !modelPrivate ? null : timeline.stream()
                .filter(e -> "ACTION".equals(e.kind()) && e.text().contains(" made private"))
                .map(Incident.Entry::at).max(Comparator.naturalOrder()).orElse(null);
        return new ExposureSummary(radius.affectedResponses(), radius.readerTenants().size(), radius.exposedTenants().size(),
                exposures.size(), radius.firstExposedRead(), radius.lastExposedRead(), since);
    }
}
