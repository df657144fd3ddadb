package dev.pagewarden.core.cluster;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node's lineage on its way to the platform: nothing is lost when a connection goes before its ack (the next
 * connection gets it again), nothing is dropped past the bound (admission stops instead), and an ack frees
 * exactly what it names.
 */
class LineageOutboxTest {

    /** A control connection that records what it was sent, until closed. */
    static final class Recorder implements ControlPeer {
        final List<ControlMessage.Lineage> got = new ArrayList<>();
        boolean open = true;

        @Override
        public String name() {
            return "platform";
        }

        @Override
        public KvLayout layout() {
            return null;
        }

        @Override
        public String address() {
            return "test";
        }

        @Override
        public boolean send(ControlMessage m) {
            if (open) {
                got.add((ControlMessage.Lineage) m);
            }
            return open;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
        }

        List<Long> ids() {
            return got.stream().flatMap(l -> l.events().stream()).map(LineageEvent::id).toList();
        }

        List<Long> seqs() {
            return got.stream().flatMap(l -> LongStream.range(l.firstSeq(), l.firstSeq() + l.events().size()).boxed())
                    .toList();
        }
    }

    static LineageEvent event(long id) {
        return new LineageEvent(id, LineageEvent.Kind.ALLOCATE, id, "decode-a", "decode-a", 0, id, 1, "t", -1, -1, null,
                -1, -1, 0, 0, true);
    }

    @Test
    void unacknowledgedEventsGoAgainOnTheNextConnectionAndAnAckFreesThem() {
        List<LineageEvent> local = new ArrayList<>();
        LineageOutbox box = new LineageOutbox(local::add, 100);
        for (long i = 1; i <= 3; i++) {
            box.emit(event(i));
        }
        Recorder first = new Recorder();
        box.subscribe(first);
        box.flush();
        box.flush(); // nothing new: nothing sent twice on one connection
        assertThat(first.ids()).containsExactly(1L, 2L, 3L);
        assertThat(first.seqs()).containsExactly(1L, 2L, 3L);

        first.close(); // lost before its ack
        box.unsubscribe(first);
        box.emit(event(4));
        Recorder second = new Recorder();
        box.subscribe(second);
        box.flush();
        assertThat(second.ids()).containsExactly(1L, 2L, 3L, 4L);

        box.acknowledged(second, 2);
        assertThat(box.backlog()).isEqualTo(2);
        box.acknowledged(first, 4); // a connection that is no platform's any more acknowledges nothing
        assertThat(box.backlog()).isEqualTo(2);
        box.acknowledged(second, 4);
        assertThat(box.backlog()).isZero();
        assertThat(local).extracting(LineageEvent::id).containsExactly(1L, 2L, 3L, 4L);
    }

    @Test
    void pastTheBoundItStopsAcceptingButKeepsEveryEvent() {
        LineageOutbox box = new LineageOutbox(LineageSink.NONE, 3);
        for (long i = 1; i <= 2; i++) {
            box.emit(event(i));
        }
        assertThat(box.accepting()).isTrue();
        for (long i = 3; i <= 5; i++) {
            box.emit(event(i)); // requests already admitted go on emitting: never dropped
        }
        assertThat(box.accepting()).isFalse();
        Recorder platform = new Recorder();
        box.subscribe(platform);
        box.flush();
        assertThat(platform.ids()).containsExactly(1L, 2L, 3L, 4L, 5L);
        box.acknowledged(platform, 5);
        assertThat(box.accepting()).isTrue();
    }

    @Test
    void aLongBacklogGoesInBatches() {
        LineageOutbox box = new LineageOutbox(LineageSink.NONE, 10_000);
        int n = 2 * LineageOutbox.BATCH + 7;
        for (long i = 1; i <= n; i++) {
            box.emit(event(i));
        }
        Recorder platform = new Recorder();
        box.subscribe(platform);
        box.flush();
        assertThat(platform.got).hasSize(3).allSatisfy(l -> assertThat(l.events().size()).isLessThanOrEqualTo(LineageOutbox.BATCH));
        assertThat(platform.seqs()).isEqualTo(LongStream.rangeClosed(1, n).boxed().toList());
    }

    @Test
    void theLocalSinkBeingFullStopsAdmissionToo() {
        LineageSink full = new LineageSink() {
            @Override
            public void emit(LineageEvent event) {
            }

            @Override
            public boolean accepting() {
                return false;
            }
        };
        assertThat(new LineageOutbox(full, 10).accepting()).isFalse();
    }
}
