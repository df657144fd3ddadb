package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.core.receipt.TrustedKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The pinned receipt trust of this replica ({@code pagewarden.audit.trust-file}, default {@code <home>/receipt-trust}).
 * At first start the file does not exist: it is written with this replica's root key (the first key of its chain)
 * and logged, for the operator to archive. A replica whose signing key does not chain to an existing file (a new
 * replica sharing it) appends its own root and says so. The file lives on the host, never in the database: someone
 * who can only write the database cannot add a key to it.
 */
final class ReceiptTrustFile {
    private static final Logger LOG = LoggerFactory.getLogger(ReceiptTrustFile.class);

    private ReceiptTrustFile() {
    }

    /**
     * The trust in {@code file}, with {@code store}'s chain roots written into it when its signing key does not chain
     * yet. Roots of a key directory that existed before (not created at this start) are marked legacy: they may have
     * signed receipts without issue time.
     *
     * @throws IllegalStateException the file is unreadable as a trust file, or the signing key does not chain to it
     *                               even with this replica's roots (its first key is missing from the directory)
     */
    static ReceiptTrust ensure(Path file, ReceiptKeyStore store) throws IOException {
        Map<String, TrustedKeys.Candidate> local = store.keys().candidates();
        String current = store.keys().currentKeyId();
        ReceiptTrust trust = Files.exists(file) ? read(file) : null;
        if (trust != null && TrustedKeys.resolve(trust, local).get(current) != null) {
            return trust;
        }
        boolean legacy = !store.created();
        List<ReceiptTrust.Root> roots = local.entrySet().stream()
                .filter(e -> e.getValue().endorsement() == null)
                .filter(e -> trust == null || !trust.roots().containsKey(e.getKey()))
                .map(e -> new ReceiptTrust.Root(e.getKey(), e.getValue().key(), legacy)).toList();
        String lines = ReceiptTrust.text(roots).lines().filter(l -> l.startsWith("root ")).collect(java.util.stream.Collectors.joining("\n"));
        try {
            ReceiptTrust.append(file, roots);
        } catch (IOException e) {
            // a trust file mounted read-only (one file for every replica): the operator pins this replica's root
            throw new IllegalStateException("receipt signing key " + current + " does not chain to the pinned trust in " + file
                    + ", which cannot be written (" + e.getMessage() + "); pin this replica's root by adding:\n" + lines, e);
        }
        ReceiptTrust now = read(file);
        if (TrustedKeys.resolve(now, local).get(current) == null) {
            throw new IllegalStateException("receipt signing key " + current + " (" + store.directory() + ") does not chain to "
                    + "the pinned trust in " + file + ": its chain's first key is not in the key directory; restore it, or pin "
                    + "the key by hand (a 'root' line) after checking it");
        }
        LOG.warn("receipt trust: {} {} pinned root key(s):\n{}\narchive a copy of this file away from this host and the "
                        + "database; 'audit verify --trust FILE' and 'evidence verify --trust FILE' check against it",
                trust == null ? "wrote" : "appended to", file, lines);
        return now;
    }

    /**
     * The trust in {@code file} as it is now: read again whenever the file changed (another replica appended its root,
     * the operator edited it), else the last one read. Fail closed: a file that became unreadable throws.
     */
    static java.util.function.Supplier<ReceiptTrust> watching(Path file, ReceiptTrust initial) {
        return new java.util.function.Supplier<>() {
            private ReceiptTrust last = initial;
            private Object stamp = stamp(file);

            @Override
            public synchronized ReceiptTrust get() {
                Object now = stamp(file);
                if (!now.equals(stamp)) {
                    try {
                        last = read(file);
                    } catch (IOException e) {
                        throw new IllegalStateException("receipt trust file " + file + " cannot be read: " + e.getMessage(), e);
                    }
                    stamp = now;
                }
                return last;
            }
        };
    }

    private static Object stamp(Path file) {
        try {
            var a = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class);
            return List.of(a.lastModifiedTime(), a.size(), String.valueOf(a.fileKey()));
        } catch (IOException e) {
            return "missing";
        }
    }

    private static ReceiptTrust read(Path file) throws IOException {
        try {
            return ReceiptTrust.read(file);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("receipt trust file: " + e.getMessage(), e);
        }
    }
}
