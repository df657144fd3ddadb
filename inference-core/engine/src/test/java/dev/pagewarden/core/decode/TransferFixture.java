package dev.pagewarden.core.decode;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.PageFrame;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A request of tenant "t" walked to "transferring" into {@code pool}'s pages, as the engine would, for intake tests. */
final class TransferFixture {
    final Sequence seq;
    final int generation;

    /** A one-thread CPU backend of the stories260K fixture. */
    static Backend cpuBackend() {
        return Backends.select("cpu").create(IsolationFixtures.stories(), new BackendOptions(1));
    }

    /** A decode pool of two 4-token pages on {@code backend}. */
    static KvPool twoPagePool(Backend backend) {
        return new KvPool("decode-0", backend.allocateKv(KvLayout.of(backend.config(), 4), 2));
    }

    /** Request 1 with {@code prompt}, decode pages reserved in {@code pool}, its transfer expected by {@code intake}. */
    TransferFixture(KvPool pool, KvIntake<Sequence> intake, int[] prompt, int pages) {
        seq = new Sequence(1, new GenerationRequest("t", prompt, 4, SamplingParams.greedy()), TokenListener.NONE, 0);
        seq.moveTo(new RequestState.Admitted());
        seq.decodePages(pool.allocate(1, "t", pages), 0);
        seq.moveTo(new RequestState.Reserved());
        seq.moveTo(new RequestState.Prefilling());
        seq.moveTo(new RequestState.Transferring());
        generation = seq.nextTransferGeneration();
        intake.expect(seq);
    }

    /** Frame {@code index} of {@code tokens} zero-filled slots with a valid checksum; returns whether the intake took it. */
    boolean sendFrame(KvPool pool, KvIntake<Sequence> intake, int index, int tokens) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(pool.layout().pageBytes());
            long[] writers = new long[pool.layout().pageTokens()];
            java.util.Arrays.fill(writers, 1);
            return intake.onFrame(new PageFrame(1, generation, index, tokens, InProcessKvTransport.crc32c(page), page,
                    writers, new PageRef(index, 1), "prefill-0"));
        }
    }
}
