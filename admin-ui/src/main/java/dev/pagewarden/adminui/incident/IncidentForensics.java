package dev.pagewarden.adminui.incident;

import dev.pagewarden.adminui.names.NameLookup;
import dev.pagewarden.adminui.names.Names;
import dev.pagewarden.adminui.web.When;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.incident.FrozenBlastRadius;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import org.springframework.stereotype.Service;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the incident page shows beyond the raw records: the one-line summary, the next-step checklist, the names
 * of the tenants and responses it lists, and its two charts. Blocking (PostgreSQL): call it off the event loop.
 */
@Service
class IncidentForensics {
    private final IncidentService incidents;
    private final DisclosureService disclosures;
    private final NameLookup names;
    private final When when;

    IncidentForensics(IncidentService incidents, DisclosureService disclosures, NameLookup names, When when) {
        this.when = when;
        this.incidents = incidents;
        this.disclosures = disclosures;
        this.names = names;
    }

    record View(ExposureSummary summary, List<Checklist.Step> checklist, Names names, String timelineSvg, String matrixSvg) {
    }

    View of(Incident incident, BlastRadius radius, List<Incident.Entry> timeline, boolean modelPrivate,
            List<FrozenBlastRadius> frozen) {
        // the lineage rows behind the radius's responses: the radius keeps only the incident model's readers
        Set<Long> readers = new HashSet<>();
        radius.responses().forEach(r -> readers.add(r.readerRequest()));
        List<Exposure> exposures = incidents.exposures(incident).stream().filter(e -> readers.contains(e.readerRequest())).toList();

        boolean everPrivate = timeline.stream().anyMatch(e -> "ACTION".equals(e.kind()) && e.text().contains(" made private"));
        List<Checklist.Step> steps = Checklist.of(incident, modelPrivate, everPrivate, frozen, disclosures.versions(incident.id()));

        Set<String> tenants = new HashSet<>();
        Set<Long> requests = new HashSet<>(readers);
        tenants.addAll(radius.readerTenants());
        tenants.addAll(radius.exposedTenants());
        radius.responses().forEach(r -> requests.addAll(r.exposingRequests()));
        for (FrozenBlastRadius f : frozen) {
            for (FrozenBlastRadius.Row row : concat(f.readers(), f.exposed())) {
                requests.add(row.request());
                requests.addAll(row.counterparts());
                tenants.add(row.tenant());
                tenants.addAll(row.counterpartTenants());
            }
        }
        Names named = names.of(tenants, requests);

        List<Instant> reads = exposures.stream().map(Exposure::readAt).toList();
        String timelineSvg = ExposureTimelineChart.render("exposure-chart", reads, ExposureTimelineChart.markers(timeline),
                when.zone());
        String matrixSvg = TenantMatrixChart.render("tenant-matrix", exposures, named);
        return new View(ExposureSummary.of(radius, exposures, timeline, modelPrivate), steps, named, timelineSvg, matrixSvg);
    }

    private static List<FrozenBlastRadius.Row> concat(List<FrozenBlastRadius.Row> a, List<FrozenBlastRadius.Row> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }
}
