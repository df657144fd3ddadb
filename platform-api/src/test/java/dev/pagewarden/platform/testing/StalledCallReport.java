package dev.pagewarden.platform.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * When a test fails because an HTTP call got no answer in time, says where the bytes were: every TCP
 * socket of this machine on a platform port with its send and receive queues (from /proc/net/tcp -
 * bytes in a server socket's receive queue mean the server never read the request; bytes in the
 * client's send queue mean it never left), then every thread's stack. A stalled call is otherwise
 * silent: nothing logs, nothing is busy.
 */
public final class StalledCallReport implements TestExecutionExceptionHandler {
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        if (timedOut(failure)) {
            StringBuilder out = new StringBuilder("=== stalled call in ").append(context.getDisplayName()).append('\n');
            context.getTestInstance().filter(PlatformTestBase.class::isInstance).map(PlatformTestBase.class::cast)
                    .ifPresent(test -> sockets(out, Integer.parseInt(test.env.getProperty("local.server.port", "0"))));
            for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
                out.append(thread);
            }
            System.err.println(out);
        }
        throw failure;
    }

    private static boolean timedOut(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static final Map<String, String> STATES = Map.of("01", "ESTABLISHED", "04", "FIN_WAIT1", "05", "FIN_WAIT2",
            "06", "TIME_WAIT", "07", "CLOSE", "08", "CLOSE_WAIT", "09", "LAST_ACK", "0A", "LISTEN");

    private static int port(String addressAndPort) {
        return Integer.parseInt(addressAndPort.substring(addressAndPort.lastIndexOf(':') + 1), 16);
    }

    /** /proc/net/tcp columns: sl, local addr:port, remote addr:port, state, tx_queue:rx_queue, ... (hex). */
    private static void sockets(StringBuilder out, int port) {
        // the client that timed out has closed its side by now; the server side still shows what it never read
        out.append("sockets on port ").append(port).append(" (local -> remote, state, bytes in send / receive queue):\n");
        for (String file : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                for (String line : Files.readAllLines(Path.of(file))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length <= 4 || !f[1].contains(":")) {
                        continue; // the header line
                    }
                    int local = port(f[1]);
                    int remote = port(f[2]);
                    if (local == port || remote == port) {
                        String[] queues = f[4].split(":");
                        out.append("  port ").append(local).append(" -> ").append(remote)
                                .append(' ').append(STATES.getOrDefault(f[3], "state " + f[3]))
                                .append(" send ").append(Long.parseLong(queues[0], 16))
                                .append(" recv ").append(Long.parseLong(queues[1], 16)).append('\n');
                    }
                }
            } catch (IOException | RuntimeException e) {
                out.append("  (").append(file).append(" unreadable: ").append(e).append(")\n");
            }
        }
    }
}
