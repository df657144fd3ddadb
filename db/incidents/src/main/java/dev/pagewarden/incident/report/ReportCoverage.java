package dev.pagewarden.incident.report;

import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which incident already covers the responses an outside report names: each named id ({@code cmpl-...},
 * {@code chatcmpl-...}: the id the tenant was given) resolved to the engine's request through {@code requests},
 * then looked up in the blast radius of the other incidents. A report about responses another incident covers
 * is merged into that incident (admin only); a named id no incident covers stays unexplained.
 * Blocking (JDBC): callers run off the event loop.
 */
@Service
public class ReportCoverage {
    private final JdbcClient jdbc;
    private final IncidentService incidents;
    private final OutsideReports reports;

    ReportCoverage(JdbcClient jdbc, IncidentService incidents, OutsideReports reports) {
        this.jdbc = jdbc;
        this.incidents = incidents;
        this.reports = reports;
    }

    /**
     * One id a report named.
     *
     * @param named      as the reporter wrote it
     * @param request    the engine's request id; null when no response has that id
     * @param coveredBy  the incident whose blast radius holds the request (as reader or as the one read); null when none does
     */
    public record NamedId(String named, Long request, Long coveredBy) {
        public boolean known() {
            return request != null;
        }

        public boolean covered() {
            return coveredBy != null;
        }
    }

    /** A report with what its named ids resolve to. */
    public record CoveredReport(OutsideReports.Report report, List<NamedId> ids) {
        /** The incidents covering some named id, in the order first named: what the report could be merged into. */
        public List<Long> coveringIncidents() {
            return ids.stream().filter(NamedId::covered).map(NamedId::coveredBy).distinct().toList();
        }
    }

    /** The reports behind a reported incident, each with its named ids resolved. */
    public List<CoveredReport> forIncident(long incidentId) {
        List<OutsideReports.Report> found = reports.forIncident(incidentId);
        if (found.isEmpty()) {
            return List.of();
        }
        Candidates candidates = new Candidates(incidentId);
        return found.stream().map(r -> new CoveredReport(r, names(r).stream().map(candidates::resolve).toList())).toList();
    }

    /**
     * Merges the reported incident into {@code into}, which must cover at least one id its reports name;
     * returns the reported incident, resolved and merged.
     */
    public Incident merge(long reportedIncident, long into, String actor) {
        Incident reported = incidents.get(reportedIncident);
        if (!reported.node().equals(IncidentService.REPORT_NODE)) {
            throw new IllegalArgumentException("incident " + reportedIncident + " was not opened by an outside report");
        }
        List<String> covered = forIncident(reportedIncident).stream().flatMap(r -> r.ids().stream())
                .filter(n -> Long.valueOf(into).equals(n.coveredBy())).map(NamedId::named).distinct().toList();
        if (covered.isEmpty()) {
            throw new IllegalArgumentException("no response the report on incident " + reportedIncident
                    + " names is in incident " + into + "'s blast radius");
        }
        return incidents.merge(reportedIncident, into, actor,
                "an outside report named response(s) in this blast radius: " + String.join(", ", covered));
    }

    /** The ids a report names, as stored ({@link OutsideReports#requestIds}: separated by ", "). */
    private static List<String> names(OutsideReports.Report r) {
        return r.requestIds() == null ? List.of() : List.copyOf(new LinkedHashSet<>(List.of(r.requestIds().split(",\\s*"))));
    }

    /**
     * The other incidents (not merged ones), detector incidents before reported ones, oldest first; each one's
     * blast radius computed once per look-up.
     */
    private final class Candidates {
        private final List<Incident> others;
        private final Map<Long, BlastRadius> radii = new HashMap<>();

        Candidates(long self) {
            others = incidents.list().stream().filter(i -> i.id() != self && !i.merged())
                    .sorted(Comparator.comparing((Incident i) -> i.node().equals(IncidentService.REPORT_NODE))
                            .thenComparingLong(Incident::id))
                    .toList();
        }

        NamedId resolve(String named) {
            Optional<Request> request = request(named);
            if (request.isEmpty()) {
                return new NamedId(named, null, null);
            }
            long id = request.get().id();
            for (Incident i : others) {
                // every request of a blast radius was received before the window closed: the rest need no lineage query
                if (request.get().receivedAt().isAfter(incidents.window(i)[1])) {
                    continue;
                }
                if (radii.computeIfAbsent(i.id(), k -> incidents.blastRadius(i)).covers(id)) {
                    return new NamedId(named, id, i.id());
                }
            }
            return new NamedId(named, id, null);
        }
    }

    private record Request(long id, Instant receivedAt) {
    }

    /** The engine's request behind the id a tenant was given, with or without its prefix (cmpl-, chatcmpl-, resp_). */
    private Optional<Request> request(String named) {
        String bare = dev.pagewarden.incident.TenantRequestIds.bare(named);
        return jdbc.sql("SELECT id, received_at FROM requests WHERE public_id = :p").param("p", bare)
                .query((rs, i) -> new Request(rs.getLong(1), rs.getTimestamp(2).toInstant())).optional();
    }
}
