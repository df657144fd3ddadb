package dev.pagewarden.platform.testing;

import reactor.blockhound.BlockHound;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * BlockHound over every platform test: a blocking call (JDBC, file I/O, sleeps, locks waited on) on a
 * Netty event-loop thread or a Reactor parallel thread is recorded here and fails the request that
 * made it. {@link #violations()} is checked after the tests, so nothing blocks unnoticed.
 */
public final class EventLoopGuard {
    private static final List<String> VIOLATIONS = new CopyOnWriteArrayList<>();
    private static boolean installed;

    private EventLoopGuard() {
    }

    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        BlockHound.install(builder -> builder
                // class loading and logging may touch the disk once; neither is request work
                .allowBlockingCallsInside("java.lang.ClassLoader", "loadClass")
                .allowBlockingCallsInside("ch.qos.logback.core.OutputStreamAppender", "writeBytes")
                .blockingMethodCallback(method -> {
                    String where = Thread.currentThread().getName() + ": " + method;
                    VIOLATIONS.add(where + " at " + caller());
                    Error error = new Error("blocking call on a non-blocking thread: " + where);
                    // said at once: the request that made the call may never answer, and a test that waits on it
                    // only sees a timeout
                    error.printStackTrace();
                    throw error;
                }));
    }

    private static String caller() {
        return StackWalker.getInstance().walk(frames -> frames
                .filter(f -> f.getClassName().startsWith("dev.pagewarden"))
                .filter(f -> !f.getClassName().startsWith(EventLoopGuard.class.getName()))
                .findFirst().map(StackWalker.StackFrame::toString).orElse("(outside pagewarden code)"));
    }

    public static List<String> violations() {
        return List.copyOf(VIOLATIONS);
    }
}
