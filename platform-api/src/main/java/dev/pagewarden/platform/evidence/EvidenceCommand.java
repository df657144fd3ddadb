package dev.pagewarden.platform.evidence;

import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.db.audit.KeyTrust;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.evidence.ChainVerifier;
import dev.pagewarden.db.evidence.Checkpoints;
import dev.pagewarden.platform.database.CommandDatabase;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Commands of the platform jar that run instead of the server:
 * <pre>
 *   java -jar pagewarden-platform.jar audit verify [--trust FILE] [--checkpoints FILE] [--from T] [--to T] [--spring.datasource.url=...]
 *   java -jar pagewarden-platform.jar evidence verify FILE [--trust FILE] [--keys JWKS_FILE]
 * </pre>
 * {@code audit verify} recomputes every chain in the platform's database (the usual datasource settings)
 * and prints {@code {"ok", "broken", "checked"}}; signatures count only by keys that chain to the roots in the trust
 * file ({@code --trust}; default {@code ~/.pagewarden/receipt-trust}, or {@code <pagewarden.home>/receipt-trust}), and
 * {@code --checkpoints} holds the chains to checkpoints archived outside the database. {@code evidence verify} checks
 * an evidence bundle offline.
 * Exit status: 0 intact, 1 broken (named on standard output), 2 unreadable or unusable input.
 */
public final class EvidenceCommand {
    /** Statement timeout of the command: it may read a whole lineage table, so longer than a request's. */
    private static final int TIMEOUT_SECONDS = 600;

    private EvidenceCommand() {
    }

    /** True when {@code args} name one of these commands. */
    public static boolean handles(String[] args) {
        return args.length >= 2 && (args[0].equals("audit") || args[0].equals("evidence")) && args[1].equals("verify");
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        try {
            return args[0].equals("audit") ? auditVerify(args, out, err) : BundleVerifier.run(args, out, err);
        } catch (UsageException e) {
            err.println(e.getMessage());
            return 2;
        }
    }

    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    private static final String AUDIT_USAGE = "usage: audit verify [--trust FILE] [--checkpoints FILE] [--from T] [--to T] "
            + "[--spring.datasource.url=...]";

    private static int auditVerify(String[] args, PrintStream out, PrintStream err) {
        Instant from = null, to = null;
        Path trustFile = null, archive = null;
        String home = null;
        List<String> spring = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            switch (args[i]) {
                case "--from" -> from = instant("--from", value(args, ++i));
                case "--to" -> to = instant("--to", value(args, ++i));
                case "--trust" -> trustFile = path(value(args, ++i));
                case "--checkpoints" -> archive = path(value(args, ++i));
                default -> {
                    if (!args[i].startsWith("--")) {
                        throw new UsageException(AUDIT_USAGE + "; unknown '" + args[i] + "'");
                    }
                    if (args[i].startsWith("--pagewarden.home=")) {
                        home = args[i].substring("--pagewarden.home=".length());
                    }
                    spring.add(args[i]);
                }
            }
        }
        if (trustFile == null) {
            trustFile = (home != null ? Path.of(home) : Path.of(System.getProperty("user.home"), ".pagewarden")).resolve("receipt-trust");
            if (!Files.exists(trustFile)) {
                throw new UsageException("audit verify: no pinned trust: pass --trust FILE (the receipt-trust file the platform "
                        + "wrote at first start, from your archive); " + trustFile + " does not exist");
            }
        }
        ReceiptTrust trust;
        List<Checkpoints.Checkpoint> archived;
        try {
            trust = ReceiptTrust.read(trustFile);
            archived = archive == null ? List.of() : Checkpoints.readArchive(archive);
        } catch (IOException | IllegalArgumentException e) {
            err.println("audit verify: " + e.getMessage());
            return 2;
        }
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(CommandDatabase.class).web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF).logStartupInfo(false).registerShutdownHook(false).run(spring.toArray(String[]::new))) {
            DataSource ds = ctx.getBean(DataSource.class);
            ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(30), Duration.ofMinutes(10));
            ChainVerifier verifier = new ChainVerifier(new KeyTrust(trust, registry, Map::of, Duration.ZERO), TIMEOUT_SECONDS)
                    .withArchive(archived);
            ChainVerifier.Result r;
            try (Connection c = ds.getConnection()) {
                r = verifier.verify(c, from, to);
            }
            out.println(BundleFormat.json(EvidenceController.result(r)));
            return r.ok() ? 0 : 1;
        } catch (Exception e) {
            err.println("audit verify: could not read the chains: " + e.getMessage());
            return 2;
        }
    }

    static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new UsageException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    private static Instant instant(String name, String v) {
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException e) {
            throw new UsageException(name + " must be an ISO-8601 instant such as 2026-03-01T00:00:00Z, not '" + v + "'");
        }
    }

    static Path path(String v) {
        return Path.of(v);
    }
}
