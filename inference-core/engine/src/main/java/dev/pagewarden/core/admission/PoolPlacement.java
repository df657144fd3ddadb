package dev.pagewarden.core.admission;

import dev.pagewarden.core.kv.PageGrants;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.AdmissionView;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Requests placed in this process: their decode reservation comes from one decode pool, then they go to prefill.
 * The reservation is what prefill writes plus {@code headroomPages} (decode takes more as it goes), never more
 * than the whole request; {@link dev.pagewarden.core.engine.EngineConfig#FULL_RESERVATION} reserves the whole
 * request at once.
 */
final class PoolPlacement<S extends AdmissionView> implements Admission.Placement<S> {
    private final PageGrants decodePool;
    private final Consumer<S> onReserved;
    private final LongSupplier clock;
    private final int headroomPages;

    PoolPlacement(PageGrants decodePool, Consumer<S> onReserved, LongSupplier clock, int headroomPages) {
        this.decodePool = decodePool;
        this.onReserved = onReserved;
        this.clock = clock;
        this.headroomPages = headroomPages;
    }

    @Override
    public Admission.Room reserve(S seq) {
        int pages = Admission.reservationPages(seq.request(), seq.prefillLength(), decodePool.layout().pageTokens(),
                headroomPages);
        List<PageRef> reserved = decodePool.allocate(seq.id(), seq.tenant(), pages);
        if (reserved == null) {
            return new Admission.Room.Wait();
        }
        seq.decodePages(reserved, clock.getAsLong());
        seq.moveTo(new RequestState.Reserved());
        return new Admission.Room.Reserved();
    }

    @Override
    public void start(S seq) {
        onReserved.accept(seq);
    }

    @Override
    public void release(S seq) {
        List<PageRef> pages = seq.takeDecodePages();
        if (!pages.isEmpty()) {
            decodePool.release(seq.id(), pages);
        }
    }
}
