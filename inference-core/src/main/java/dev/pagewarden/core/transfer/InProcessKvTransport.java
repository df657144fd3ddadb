package dev.pagewarden.core.transfer;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.lab.Fault;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.lab.LabFaults;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.CRC32C;

/**
 * Transfers on a thread of their own, with real copies: each page leaves the prefill pool through a
 * host staging buffer, is checksummed, and is handed to the receiver as a tagged frame. A refused
 * frame ends the transfer without a "done". Every transfer ends with an ack for its (request,
 * generation), after which no write of it can land. Lab faults (delay, drop, corrupt) act here.
 *
 * <p>Transfers run concurrently, one sender thread each, as writes from several prefill ranks do on
 * a real interconnect: a slow transfer does not hold back the others, and a late write of one
 * request can meet pages that another request already holds and decodes from (which the receiver
 * must refuse).
 */
public final class InProcessKvTransport implements KvTransport {
    private static final System.Logger LOG = System.getLogger(InProcessKvTransport.class.getName());
    private final KvReceiver receiver;
    private final LabFaults faults;
    private final ExecutorService sender = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pagewarden-kv-transfer");
        t.setDaemon(true);
        return t;
    });

    public InProcessKvTransport(KvReceiver receiver, LabFaults faults) {
        this.receiver = receiver;
        this.faults = faults;
    }

    @Override
    public void send(TransferJob job) {
        sender.execute(() -> {
            boolean ok;
            try {
                ok = sendAll(job);
            } catch (RuntimeException e) {
                // the receiver fails the request when the ack below finds the transfer unfinished
                LOG.log(System.Logger.Level.WARNING, "KV transfer of request " + job.requestId() + " (generation "
                        + job.generation() + ") stopped: " + e, e);
                ok = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ok = false;
            }
            receiver.onAck(job.requestId(), job.generation());
            job.onOutcome().accept(ok);
        });
    }

    private boolean sendAll(TransferJob job) throws InterruptedException {
        KvLayout layout = job.source().layout();
        int frames = layout.pagesFor(job.tokens());
        try (Arena arena = Arena.ofConfined()) {
            // one staging buffer per transfer, reused frame by frame: the receiver copies each frame before returning
            MemorySegment staging = arena.allocate(layout.pageBytes(), 64);
            for (int i = 0; i < frames; i++) {
                PageRef src = job.sourcePages().get(i);
                job.source().storage().readPage(src.page(), staging);
                int tokens = Math.min(layout.pageTokens(), job.tokens() - i * layout.pageTokens());
                int crc = crc32c(staging);
                if (faults.has(Fault.CORRUPT_TRANSFER_BYTE) && i == 0) {
                    // the top exponent bit of the first K value (layer 0, position 0), flipped after the checksum was taken
                    staging.set(ValueLayout.JAVA_BYTE, 3, (byte) (staging.get(ValueLayout.JAVA_BYTE, 3) ^ 0x40));
                }
                if (faults.has(Fault.DELAY_TRANSFER_WRITES)) {
                    Thread.sleep(faults.delayMillis());
                }
                if (faults.has(Fault.DROP_TRANSFER_PAGE) && i == frames - 1) {
                    continue; // lost on the wire; the sender does not notice
                }
                KvPool.SlotWriters provenance = job.source().groundTruthEnabled() ? job.source().slotWriters(src.page()) : null;
                // lineage: the bytes left, whether or not the wire then loses them
                job.source().lineage().transfer(Kind.TRANSFER_OUT, src.page(), src.epoch(), job.requestId(), job.tenant(),
                        tokens, null, -1, -1, job.generation(), crc);
                if (!receiver.onFrame(new PageFrame(job.requestId(), job.generation(), i, tokens, crc, staging, src,
                        job.source().name(), provenance))) {
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
