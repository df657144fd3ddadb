package dev.pagewarden.oracle;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The {@code openssl} binary as an independent check on certificates and keys (and a second implementation that
 * makes them). A test that needs it calls {@link #assumeAvailable()} and is skipped where it is not on the PATH.
 */
public final class Openssl {
    private Openssl() {
    }

    /** Exit code and output (stdout and stderr together); code -1 when openssl could not run. */
    public record Result(int code, String output) {
    }

    public static void assumeAvailable() {
        Assumptions.assumeTrue(run("version").code() == 0, "openssl is not on the PATH");
    }

    public static Result run(String... args) {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, out + "\nopenssl timed out");
            }
            return new Result(p.exitValue(), out);
        } catch (IOException e) {
            return new Result(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, e.toString());
        }
    }
}
