package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.transfer.net.CertificateAuthority;
import dev.pagewarden.core.transfer.net.ClusterTls;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Certificates in a {@code pki} folder made by the cluster's own CA code, and nodes on loopback that use them. */
final class ClusterFixture {
    static final Duration HEARTBEAT = Duration.ofMillis(100);
    final Path pki;
    private final CertificateAuthority ca;

    /** A CA named {@code caName} writing its files to {@code dir}. */
    ClusterFixture(Path dir, String caName) {
        this.pki = dir;
        Instant now = Instant.now();
        this.ca = CertificateAuthority.create(caName, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
        try {
            Files.createDirectories(dir);
            ca.write(dir.resolve("ca.crt"), dir.resolve("ca.key"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private final java.util.Map<String, ClusterTls> issued = new java.util.concurrent.ConcurrentHashMap<>();

    /** The TLS of node {@code name}: a certificate this CA issued for it (the first time it is asked for). */
    ClusterTls tls(String name) {
        return issued.computeIfAbsent(name, this::issue);
    }

    private ClusterTls issue(String name) {
        Instant now = Instant.now();
        try {
            ca.issue(name, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)))
                    .write(pki.resolve(name + ".crt"), pki.resolve(name + ".key"));
            return ClusterTls.load(pki, name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static NodeOptions options(String name, int port) {
        return new NodeOptions(name, "127.0.0.1", port, "127.0.0.1", HEARTBEAT, Duration.ofSeconds(5));
    }

    /** Every page life step of every node this fixture starts, in one in-memory list. */
    final List<LineageEvent> lineage = new CopyOnWriteArrayList<>();

    PrefillNode prefill(LoadedModel model, EngineConfig config, String name, int port) throws InterruptedException {
        return PrefillNode.start(model, config, options(name, port), tls(name), lineage::add);
    }

    DecodeNode decode(LoadedModel model, EngineConfig config, String name, int port) throws InterruptedException {
        return DecodeNode.start(model, config, options(name, port), tls(name), lineage::add);
    }

    ClusterEngine client(List<NodeAddress> nodes) {
        return client(nodes, dev.pagewarden.core.lineage.LineageSink.NONE);
    }

    /** A cluster client whose nodes' page life steps go to {@code platformLineage}. */
    ClusterEngine client(List<NodeAddress> nodes, dev.pagewarden.core.lineage.LineageSink platformLineage) {
        return ClusterEngine.connect(nodes, tls("platform"), ClusterOptions.defaults("platform").withHeartbeat(HEARTBEAT)
                .withMaxBackoff(Duration.ofMillis(400)), platformLineage, null);
    }

    static NodeAddress at(NodeRole role, int port) {
        return new NodeAddress(role, "127.0.0.1", port);
    }

    /** A node's config: whole decode reservations, as the node command starts nodes by default. */
    static EngineConfig config() {
        return EngineConfig.builder().backend("cpu").threads(1).decodeHeadroomPages(EngineConfig.FULL_RESERVATION).build();
    }
}
