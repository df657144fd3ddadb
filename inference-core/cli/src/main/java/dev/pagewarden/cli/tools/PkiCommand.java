package dev.pagewarden.cli.tools;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.transfer.net.CertificateAuthority;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code pki}: the cluster CA and one certificate per engine node, for the TLS between nodes
 * ({@link dev.pagewarden.core.transfer.net.ClusterTls} reads them). A folder that already holds the CA gets
 * more nodes signed by it; existing node files are never overwritten.
 */
public final class PkiCommand implements Command {

    static final int DEFAULT_DAYS = 365;
    private static final int MAX_DAYS = 36_500;
    /** Certificates start a few minutes in the past, so a node whose clock runs a little behind accepts them at once. */
    private static final Duration CLOCK_SKEW = Duration.ofMinutes(5);
    private static final String CA_COMMON_NAME = "Pagewarden cluster CA";

    public PkiCommand() {
    }

    @Override
    public String name() {
        return "pki";
    }

    @Override
    public String usage() {
        return "pki --out DIR --names NAME,NAME,... [--days N (default " + DEFAULT_DAYS + ")] "
                + "(writes the cluster CA DIR/ca.crt + DIR/ca.key unless DIR has them, and DIR/NAME.crt + DIR/NAME.key per node, "
                + "signed by that CA; names: lower-case letters, digits, '-' and '.')";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path dir = Path.of(args.required("out"));
        List<String> names = names(args.required("names"));
        int days = args.integer("days", DEFAULT_DAYS);
        args.rejectUnknown();
        if (days < 1 || days > MAX_DAYS) {
            throw new Args.UsageException("--days must be between 1 and " + MAX_DAYS + ", got " + days);
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new Args.UsageException("--out " + dir + " is a file, not a folder");
        }
        Path caCert = dir.resolve("ca.crt");
        Path caKey = dir.resolve("ca.key");
        boolean haveCa = Files.exists(caCert);
        if (haveCa != Files.exists(caKey)) {
            Path missing = haveCa ? caKey : caCert;
            throw new IllegalStateException(missing + " is missing next to " + (haveCa ? caCert : caKey)
                    + ": the CA needs both files (or neither, for a new CA)");
        }
        // every check before the first write: a refused run leaves the folder as it was
        for (String name : names) {
            for (Path p : List.of(dir.resolve(name + ".crt"), dir.resolve(name + ".key"))) {
                if (Files.exists(p)) {
                    throw new IllegalStateException(p + " already exists; not overwritten (delete " + name
                            + ".crt and " + name + ".key to make a new certificate for " + name + ")");
                }
            }
        }

        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS); // X.509 times are in whole seconds
        Instant notBefore = now.minus(CLOCK_SKEW);
        Instant notAfter = now.plus(Duration.ofDays(days));
        CertificateAuthority ca;
        if (haveCa) {
            ca = CertificateAuthority.load(caCert, caKey);
            Instant caEnd = ca.certificate().getNotAfter().toInstant();
            if (!caEnd.isAfter(now)) {
                throw new IllegalStateException(caCert + ": the cluster CA expired at " + caEnd
                        + "; make a new cluster in another folder and give every node its new files");
            }
            if (notAfter.isAfter(caEnd)) {
                notAfter = caEnd;
                err.println("note: the node certificates end with the CA, at " + caEnd);
            }
            out.println("signing with the cluster CA in " + caCert + " (valid until " + caEnd + ")");
        } else {
            Files.createDirectories(dir);
            ca = CertificateAuthority.create(CA_COMMON_NAME, notBefore, notAfter);
            ca.write(caCert, caKey);
            out.println("wrote " + caCert + " and " + caKey + ": the cluster CA, valid until " + notAfter
                    + " (ca.key signs new nodes; keep it off the nodes)");
        }
        for (String name : names) {
            Path cert = dir.resolve(name + ".crt");
            Path key = dir.resolve(name + ".key");
            ca.issue(name, notBefore, notAfter).write(cert, key);
            out.println("wrote " + cert + " and " + key + ": node " + name + ", valid until " + notAfter);
        }
        out.println("each node NAME needs ca.crt, NAME.crt and NAME.key");
        return 0;
    }

    /** The comma-separated node names: each a valid name, none twice. */
    private static List<String> names(String text) {
        Set<String> names = new LinkedHashSet<>();
        for (String name : text.split(",", -1)) {
            String n = name.trim();
            if (n.isEmpty()) {
                throw new Args.UsageException("--names has an empty name in '" + text + "'");
            }
            try {
                CertificateAuthority.checkNodeName(n);
            } catch (IllegalArgumentException e) {
                throw new Args.UsageException("--names: " + e.getMessage());
            }
            if (!names.add(n)) {
                throw new Args.UsageException("--names: '" + n + "' given twice");
            }
        }
        return new ArrayList<>(names);
    }
}
