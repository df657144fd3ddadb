package dev.pagewarden.core.transfer;

import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.fault.FaultHooks.FrameFate;
import dev.pagewarden.core.kv.KvLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Transfers with real copies: each page leaves the prefill pool through a host staging buffer, is
 * checksummed, and is handed to the receiver as a tagged frame. A refused frame ends the transfer
 * without a "done". Every transfer ends with an ack for its (request, generation), after which no
 * write of it can land.
 *
 * <p>Transfers run concurrently, one sender thread each, as writes from several prefill ranks do on
 * a real interconnect: a slow transfer does not hold back the others, and a late write of one
 * request can meet pages that another request already holds and decodes from (which the receiver
 * must refuse). When the engine is driven step by step, {@link #tick} moves every transfer on
 * instead, in the order they were sent. A frame the fault hooks delay lands that many decode ticks
 * after the previous one.
 */
public final class InProcessKvTransport implements KvTransport {
    private static final System.Logger LOG = System.getLogger(InProcessKvTransport.class.getName());
    /** How long a sender waits for decode ticks before it sends anyway (the decode loop ticks every 20 ms when idle). */
    private static final long MAX_DELAY_WAIT_MILLIS = 30_000;
    private final KvReceiver receiver;
    private final FaultHooks hooks;
    private final DecodeTicks ticks;
    private final boolean stepped;
    private final List<Sending> active = new ArrayList<>();
    private final ExecutorService sender = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pagewarden-kv-transfer");
        t.setDaemon(true);
        return t;
    });

    /** {@code stepped}: transfers move only in {@link #tick}, on the caller's thread. */
    public InProcessKvTransport(KvReceiver receiver, FaultHooks hooks, DecodeTicks ticks, boolean stepped) {
        this.receiver = receiver;
        this.hooks = hooks;
        this.ticks = ticks;
        this.stepped = stepped;
    }

    @Override
    public void send(TransferJob job) {
        Sending s = new Sending(job);
        if (stepped) {
            active.add(s);
            return;
        }
        sender.execute(() -> {
            try {
                Progress p;
                while ((p = s.advance(ticks.now())) != Progress.OVER) {
                    if (p == Progress.WAITING && !ticks.awaitAtLeast(s.dueTick, MAX_DELAY_WAIT_MILLIS)) {
                        s.dueTick = ticks.now();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                s.ok = false;
            } finally {
                s.finish();
            }
        });
    }

    /** Stepped mode: moves every transfer on as far as its delays allow at the current decode tick. */
    public void tick() {
        long now = ticks.now();
        for (int i = 0; i < active.size(); ) {
            Sending s = active.get(i);
            Progress p;
            try {
                while ((p = s.advance(now)) == Progress.SENT) {
                    // next frame
                }
            } catch (RuntimeException e) {
                p = Progress.OVER;
            }
            if (p == Progress.OVER) {
                active.remove(i);
                s.finish();
            } else {
                i++;
            }
        }
    }

    private enum Progress { SENT, WAITING, OVER }

    /** One transfer on its way: the frame being sent and what its delay waits for. */
    private final class Sending {
        final TransferJob job;
        final KvLayout layout;
        final int frames;
        /** Confined to the thread that sends (made there): closing it costs no handshake with other threads. */
        Arena arena;
        /** One staging buffer per transfer, reused frame by frame: the receiver copies each frame before returning. */
        MemorySegment staging;
        int next;
        /** The staged frame waiting for its delay; null when the next one is still to be read. */
        PageFrame frame;
        FrameFate fate;
        long dueTick;
        boolean ok = true;
        boolean done;

        Sending(TransferJob job) {
            this.job = job;
            this.layout = job.source().layout();
            this.frames = layout.pagesFor(job.tokens());
        }

        /** Sends the next frame if it is due at decode tick {@code now}; OVER once the transfer has ended. */
        Progress advance(long now) {
            if (done) {
                return Progress.OVER;
            }
            try {
                if (next == frames) {
                    ok = receiver.onDone(new TransferDone(job.requestId(), job.generation(), job.tokens(), frames));
                    done = true;
                    return Progress.OVER;
                }
                if (arena == null) {
                    arena = Arena.ofConfined();
                    staging = arena.allocate(layout.pageBytes(), 64);
                }
                if (frame == null) {
                    frame = PageStaging.stage(job, next, staging);
                    fate = hooks.beforeSend(job.requestId(), next, frames, staging);
                    dueTick = now + fate.delaySteps();
                }
                if (now < dueTick) {
                    return Progress.WAITING;
                }
                PageFrame f = frame;
                frame = null;
                next++;
                if (!fate.send()) {
                    return Progress.SENT; // lost on the wire; the sender does not notice
                }
                PageStaging.recordSent(job, f);
                if (!receiver.onFrame(f)) {
                    ok = false;
                    done = true;
                    return Progress.OVER;
                }
                return Progress.SENT;
            } catch (RuntimeException e) {
                // the receiver fails the request when the ack below finds the transfer unfinished
                LOG.log(System.Logger.Level.WARNING, "KV transfer of request " + job.requestId() + " (generation "
                        + job.generation() + ") stopped: " + e, e);
                ok = false;
                done = true;
                return Progress.OVER;
            }
        }

        /** The ack: after it no write of this transfer can land. Then the sender may reuse its pages. */
        void finish() {
            if (arena != null) {
                arena.close();
            }
            receiver.onAck(job.requestId(), job.generation());
            job.onOutcome().accept(ok && done);
        }
    }

    public static int crc32c(MemorySegment bytes) {
        return PageStaging.crc32c(bytes);
    }

    @Override
    public void close() {
        sender.shutdownNow();
        for (Sending s : active) {
            if (s.arena != null) {
                s.arena.close(); // a stepped engine closed mid-transfer: its staging buffers go with it
            }
        }
        active.clear();
    }
}
