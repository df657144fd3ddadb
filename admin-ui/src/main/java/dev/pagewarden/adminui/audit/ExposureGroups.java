package dev.pagewarden.adminui.audit;

import dev.pagewarden.db.audit.Exposure;

import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The exposure finder's rows grouped by tenant pair (reader tenant read data of exposed tenant): what an
 * operator asks first is who saw whose data; the page-level rows stay one click away in each group.
 */
final class ExposureGroups {
    private ExposureGroups() {
    }

    /** One tenant pair, its page-level rows in read order, and what they add up to. */
    record Group(String readerTenant, String exposedTenant, List<Exposure> rows, long readerRequests, long exposingRequests,
                 long pages, long slots, Instant firstRead, Instant lastRead) {
        public int reads() {
            return rows.size();
        }
    }

    /** Groups of {@code exposures}, the pair with the most reads first (ties: by tenant names). */
    static List<Group> of(List<Exposure> exposures) {
        Map<List<String>, List<Exposure>> byPair = new LinkedHashMap<>();
        for (Exposure e : exposures) {
            byPair.computeIfAbsent(List.of(String.valueOf(e.readerTenant()), String.valueOf(e.exposedTenant())),
                    k -> new java.util.ArrayList<>()).add(e);
        }
        return byPair.values().stream().map(ExposureGroups::group)
                .sorted(Comparator.comparingInt(Group::reads).reversed().thenComparing(Group::readerTenant,
                        Comparator.nullsLast(Comparator.naturalOrder())).thenComparing(Group::exposedTenant,
                        Comparator.nullsLast(Comparator.naturalOrder())))
                .toList();
    }

    private static Group group(List<Exposure> rows) {
        List<Exposure> sorted = rows.stream().sorted(Comparator.comparing(Exposure::readAt)).toList();
        Exposure first = sorted.getFirst();
        return new Group(first.readerTenant(), first.exposedTenant(), sorted,
                sorted.stream().mapToLong(Exposure::readerRequest).distinct().count(),
                sorted.stream().mapToLong(Exposure::exposingRequest).distinct().count(),
                sorted.stream().map(e -> e.node() + '/' + e.worker() + '/' + e.page()).distinct().count(),
                sorted.stream().mapToLong(Exposure::slots).sum(), first.readAt(), sorted.getLast().readAt());
    }
}
