package dev.pagewarden.adminui.audit;

import dev.pagewarden.db.audit.Exposure;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ExposureGroupsTest {
    private static final Instant T = Instant.parse("2026-11-30T05:00:00Z");

    private static Exposure read(String reader, long readerRequest, String exposed, long writer, int page, int seconds) {
        return new Exposure(exposed, writer, reader, readerRequest, "n1", "decode-0", page, 2, 1, 16, T.plusSeconds(seconds), T);
    }

    @Test
    void groupsByReaderAndExposedTenantMostReadsFirst() {
        List<ExposureGroups.Group> groups = ExposureGroups.of(List.of(
                read("t_b", 10, "t_a", 1, 5, 3), read("t_c", 11, "t_a", 1, 6, 1), read("t_b", 12, "t_a", 2, 5, 1),
                read("t_b", 12, "t_a", 2, 7, 2), read("t_a", 13, "t_b", 3, 8, 0)));
        assertThat(groups).extracting(g -> g.readerTenant() + "->" + g.exposedTenant())
                .containsExactly("t_b->t_a", "t_a->t_b", "t_c->t_a");
        ExposureGroups.Group top = groups.getFirst();
        assertThat(top.reads()).isEqualTo(3);
        assertThat(top.readerRequests()).isEqualTo(2);
        assertThat(top.exposingRequests()).isEqualTo(2);
        assertThat(top.pages()).as("pages 5 and 7 of one pool").isEqualTo(2);
        assertThat(top.slots()).isEqualTo(48);
        assertThat(top.firstRead()).isEqualTo(T.plusSeconds(1));
        assertThat(top.lastRead()).isEqualTo(T.plusSeconds(3));
        assertThat(top.rows()).extracting(Exposure::readAt).isSorted();
    }

    @Test
    void noExposuresNoGroups() {
        assertThat(ExposureGroups.of(List.of())).isEmpty();
    }
}
