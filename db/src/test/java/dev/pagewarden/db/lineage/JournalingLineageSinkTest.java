package dev.pagewarden.db.lineage;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.journal.SegmentFormat;
import dev.pagewarden.db.testing.Ev;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class JournalingLineageSinkTest {
    @TempDir
    Path dir;

    @Test
    void everyEventFromConcurrentEngineThreadsIsJournaledOnce() throws Exception {
        int threads = 4, perThread = 50_000;
        try (Journal journal = Journal.open(new Journal.Config(dir, 1 << 20, 1L << 34))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1024, 512); // small ring: exercise the full path
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int prefix = t + 1;
                ts.add(Thread.ofPlatform().start(() -> {
                    Ev ev = new Ev(prefix, 1_790_000_000_000_000L);
                    for (int i = 0; i < perThread; i++) {
                        sink.emit(ev.write("decode-0", i & 1023, i, prefix, "t" + prefix, 0, 1));
                    }
                }));
            }
            for (Thread t : ts) {
                t.join();
            }
            assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
            sink.close();
            assertThat(sink.journaled()).isEqualTo((long) threads * perThread);
            List<LineageEvent> all = new ArrayList<>();
            for (Journal.Segment s : journal.segments()) {
                SegmentFormat.read(s.path(), 0, s.durableBytes(), Integer.MAX_VALUE, all);
            }
            Set<Long> ids = new HashSet<>();
            all.forEach(e -> ids.add(e.id()));
            assertThat(all).hasSize(threads * perThread);
            assertThat(ids).hasSize(threads * perThread);
            System.out.printf("sink: %d events, %d producer waits on a full ring, %d segments%n", all.size(),
                    sink.producerWaits(), journal.segments().size());
        }
    }

    @Test
    void notAcceptingAtTheJournalCap() throws Exception {
        try (Journal journal = Journal.open(new Journal.Config(dir, 4096, 8192))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1024, 64);
            Ev ev = new Ev(1, 1_790_000_000_000_000L);
            assertThat(sink.accepting()).isTrue();
            JournalingLineageSink.Health fresh = sink.health();
            assertThat(fresh.up()).isTrue();
            assertThat(fresh.detail()).isEmpty();
            assertThat(fresh.atCap()).isFalse();
            assertThat(fresh.capBytes()).isEqualTo(8192);
            for (int i = 0; i < 500; i++) {
                sink.emit(ev.read("decode-0", i, 1, 1, "t", 0, 16));
            }
            sink.flush(10, TimeUnit.SECONDS);
            assertThat(sink.accepting()).isFalse();
            JournalingLineageSink.Health full = sink.health();
            assertThat(full.up()).isFalse();
            assertThat(full.atCap()).isTrue();
            assertThat(full.usedFraction()).isGreaterThanOrEqualTo(1.0);
            assertThat(full.detail()).contains("at its cap").contains("admission paused");
            assertThat(full.journaledEvents()).isEqualTo(500);
            assertThat(full.corruption()).isNull();
            sink.close();
        }
    }
}
