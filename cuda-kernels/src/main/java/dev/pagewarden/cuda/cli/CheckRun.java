package dev.pagewarden.cuda.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The checks of one {@code gpu-check} run: each runs even when one before it threw (a first run on a new
 * GPU should report all it can), each outcome is printed with its reason and kept for the JSON. A check
 * that cannot run here is skipped with its reason and counts neither way.
 */
final class CheckRun {
    /** A check's outcome: passed, or failed with the reason (what was measured against what was needed). */
    record Verdict(boolean pass, String reason) {
        static final Verdict PASS = new Verdict(true, null);

        /** Passes when {@code ok}; otherwise fails with {@code reason} (formatted with {@code args}, root locale). */
        static Verdict when(boolean ok, String reason, Object... args) {
            return ok ? PASS : new Verdict(false, String.format(Locale.ROOT, reason, args));
        }
    }

    private final PrintStream err;
    private final List<Map<String, Object>> checks = new ArrayList<>();

    CheckRun(PrintStream err) {
        this.err = err;
    }

    /** Runs one check; a check that throws fails with the exception as its reason (the trace on stderr). */
    void run(String name, Callable<Verdict> check) {
        long t0 = System.nanoTime();
        Verdict v;
        try {
            v = check.call();
        } catch (Exception | Error e) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            err.println("gpu-check: " + name + " threw:\n" + trace);
            v = new Verdict(false, "threw " + e);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        add(name, v.pass() ? "pass" : "fail", v.reason(), seconds);
        if (v.pass()) {
            err.printf(Locale.ROOT, "gpu-check: %-26s pass (%.1f s)%n", name, seconds);
        } else {
            err.printf(Locale.ROOT, "gpu-check: %s FAIL: %s (%.1f s)%n", name, v.reason(), seconds);
        }
    }

    /** A check that cannot run here, and why. */
    void skip(String name, String reason) {
        add(name, "skipped", reason, 0);
        err.printf(Locale.ROOT, "gpu-check: %-26s skipped: %s%n", name, reason);
    }

    private void add(String name, String status, String reason, double seconds) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("check", name);
        c.put("status", status);
        c.put("reason", reason);
        c.put("seconds", Math.round(seconds * 10) / 10.0);
        checks.add(c);
    }

    /** Passed: at least one check ran and none failed. */
    boolean passed() {
        return checks.stream().anyMatch(c -> c.get("status").equals("pass"))
                && checks.stream().noneMatch(c -> c.get("status").equals("fail"));
    }

    /**
     * Puts the verdict into the results: {@code pass}, {@code failures} ({check, reason} of each failed
     * check, empty when none), {@code skipped} (likewise) and {@code checks} (every check with its status
     * and seconds).
     */
    void report(Map<String, Object> r) {
        r.put("pass", passed());
        r.put("failures", only("fail"));
        r.put("skipped", only("skipped"));
        r.put("checks", List.copyOf(checks));
    }

    private List<Map<String, Object>> only(String status) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> c : checks) {
            if (c.get("status").equals(status)) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("check", c.get("check"));
                one.put("reason", c.get("reason"));
                out.add(one);
            }
        }
        return out;
    }
}
