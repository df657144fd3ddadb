package dev.pagewarden.platform.testing;

import dev.pagewarden.platform.engine.TokenGate;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A token gate a test can arm: the next request to reach token {@code index} is held there (its
 * decode thread waits) until the test releases it, so that whatever the test does next - a client
 * disconnect, more requests - happens at a known step of that generation.
 */
public final class HoldingGate implements TokenGate {
    private volatile int armedAt = -1;
    private volatile long heldRequest;
    private volatile CountDownLatch reached = new CountDownLatch(1);
    private volatile CountDownLatch release = new CountDownLatch(0);

    /** Holds the next request that reaches generated token {@code index}. */
    public synchronized void arm(int index) {
        reached = new CountDownLatch(1);
        release = new CountDownLatch(1);
        heldRequest = 0;
        armedAt = index;
    }

    @Override
    public void beforeToken(long requestId, int index) {
        CountDownLatch wait = null;
        synchronized (this) {
            if (armedAt >= 0 && index == armedAt) {
                armedAt = -1;
                heldRequest = requestId;
                wait = release;
                reached.countDown();
            }
        }
        if (wait != null) {
            try {
                if (!wait.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("test gate never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until the armed request is held; returns its engine id. */
    public long awaitHeld() throws InterruptedException {
        if (!reached.await(60, TimeUnit.SECONDS)) {
            throw new AssertionError("no request reached the armed token within 60 s");
        }
        return heldRequest;
    }

    public void release() {
        release.countDown();
    }
}
