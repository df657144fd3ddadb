package dev.pagewarden.core.transfer.net;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

/**
 * A throw-away cluster CA in a temporary folder, made by the production {@link CertificateAuthority}
 * (the files the {@code pki} command writes), and its nodes' TLS as a node loads it ({@link ClusterTls}).
 */
final class TestPki {
    private final Path dir;
    private final CertificateAuthority ca;

    TestPki(String caName) {
        try {
            dir = Files.createTempDirectory("pagewarden-test-pki");
            dir.toFile().deleteOnExit();
            Instant now = Instant.now();
            ca = CertificateAuthority.create(caName, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
            write("ca", ca::write);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Node {@code name} of this cluster, its certificate issued on first use. */
    synchronized ClusterTls node(String name) {
        try {
            if (!Files.exists(dir.resolve(name + ".crt"))) {
                Instant now = Instant.now();
                write(name, ca.issue(name, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)))::write);
            }
            return ClusterTls.load(dir, name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private interface Writer {
        void write(Path cert, Path key) throws IOException;
    }

    private void write(String name, Writer writer) throws IOException {
        Path cert = dir.resolve(name + ".crt"), key = dir.resolve(name + ".key");
        writer.write(cert, key);
        cert.toFile().deleteOnExit();
        key.toFile().deleteOnExit();
    }
}
