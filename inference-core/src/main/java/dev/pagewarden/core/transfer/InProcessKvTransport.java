package dev.pagewarden.core.transfer;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageRef;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.CRC32C;

/**
 * Transfers on a thread of their own, with real copies: each page leaves the prefill pool through a
 * host staging buffer, is checksummed, and is handed to the receiver as a tagged frame. A failed or
 * rejected frame is never followed by a "done": the transfer is reported failed.
 */
public final class InProcessKvTransport implements KvTransport {
    private final KvReceiver receiver;
    private final ExecutorService sender = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "pagewarden-kv-transfer");
        t.setDaemon(true);
        return t;
    });

    public InProcessKvTransport(KvReceiver receiver) {
        this.receiver = receiver;
    }

    @Override
    public void send(TransferJob job) {
        sender.execute(() -> {
            boolean ok;
            try {
                ok = sendAll(job);
            } catch (RuntimeException e) {
                ok = false;
            }
            job.onOutcome().accept(ok);
        });
    }

    private boolean sendAll(TransferJob job) {
        KvLayout layout = job.source().layout();
        int frames = layout.pagesFor(job.tokens());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staging = arena.allocate(layout.pageBytes(), 64);
            for (int i = 0; i < frames; i++) {
                PageRef src = job.sourcePages().get(i);
                job.source().storage().readPage(src.page(), staging);
                int tokens = Math.min(layout.pageTokens(), job.tokens() - i * layout.pageTokens());
                PageFrame frame = new PageFrame(job.requestId(), job.generation(), i, tokens, crc32c(staging), staging);
                if (!receiver.onFrame(frame)) {
                    return false;
                }
            }
        }
        return receiver.onDone(new TransferDone(job.requestId(), job.generation(), job.tokens(), frames));
    }

    public static int crc32c(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return (int) crc.getValue();
    }

    @Override
    public void close() {
        sender.shutdownNow();
    }
}
