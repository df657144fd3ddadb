package dev.pagewarden.platform.config;

import dev.pagewarden.core.receipt.ServingIdentity;

import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Everything the operator can set, under {@code pagewarden.*} (environment: {@code PAGEWARDEN_MODEL_PATH}
 * and so on). Validated at start: a bad value stops the platform with a message naming the property.
 */
@ConfigurationProperties("pagewarden")
@Validated
public record PagewardenProperties(@Valid @NotNull Model model, @Valid @NotNull Engine engine,
                                   @Valid @NotNull Audit audit, @Valid @NotNull Database database,
                                   @Valid @NotNull Shutdown shutdown, @Valid @NotNull Lab lab, @NotNull Path home,
                                   String adminToken) {

    public PagewardenProperties(@DefaultValue Model model, @DefaultValue Engine engine, @DefaultValue Audit audit,
                                @DefaultValue Database database, @DefaultValue Shutdown shutdown, @DefaultValue Lab lab,
                                Path home, String adminToken) {
        this.lab = lab;
        this.model = model;
        this.engine = engine;
        this.audit = audit;
        this.database = database;
        this.shutdown = shutdown;
        // placeholders do not resolve in @DefaultValue: the default lives here, not in application.yml,
        // so that binding without Spring's environment (tests, tools) gets it too
        this.home = home != null ? home : Path.of(System.getProperty("user.home"), ".pagewarden");
        this.adminToken = adminToken;
    }

    /**
     * The served model: a local {@code path} (llama2.c {@code .bin} with {@code tokenizer}, or GGUF),
     * or a {@code name} from the download registry fetched on first start into {@code home/models}.
     * Its API id is {@code id}, else the file name without extension (the name for a named model).
     * {@code downloadEndpoint} replaces the Hugging Face endpoint (a mirror; also PAGEWARDEN_HF_ENDPOINT).
     */
    public record Model(Path path, Path tokenizer, String id, String name, String downloadEndpoint) {
        @AssertTrue(message = "pagewarden.model.path and pagewarden.model.name are exclusive: set one")
        public boolean isOneSource() {
            return path == null || name == null || name.isBlank();
        }
    }

    /**
     * Engine sizing; 0 means "derive" (threads from cores, window from the model, pools from the window).
     * {@code nodeId}: this platform replica's node id, which its lineage rows, safety events, incidents and
     * receipts name (unset: the host name, a pod's name in Kubernetes; see {@link #node()}). {@code nodes}: engine nodes to serve from
     * ({@code prefill@host:port,decode@host:port}; empty: the engine runs in this process), reached with the
     * certificate {@code tlsName} from the {@code pki} folder {@code tlsDir}. {@code prefixCache}: keep the full pages of
     * prompts for later prompts of the same tenant and prompt cache key (each tenant can switch it off).
     */
    public record Engine(@NotBlank @DefaultValue("auto") String backend,
                         @Min(0) @DefaultValue("0") int threads,
                         @Min(0) @DefaultValue("0") int contextWindow,
                         @Min(1) @DefaultValue("16") int pageTokens,
                         @Min(0) @DefaultValue("0") int prefillPoolTokens,
                         @Min(0) @DefaultValue("0") int decodePoolTokens,
                         @Min(1) @DefaultValue("32") int maxBatch,
                         @Min(0) @DefaultValue("256") int maxQueue,
                         @NotBlank @DefaultValue("strict") String capacityPolicy,
                         @NotNull @DefaultValue("5s") Duration deferredReleaseTimeout,
                         @NotNull @DefaultValue("60s") Duration canaryInterval,
                         @Size(max = ServingIdentity.NODE_NAME_MAX) @Pattern(regexp = ServingIdentity.NODE_NAME_CHARS + "*",
                                 message = "may only contain letters, digits, '.', '_' and '-'") String nodeId,
                         @DefaultValue("") String nodes,
                         Path tlsDir,
                         @NotBlank @DefaultValue("platform") String tlsName,
                         @Min(0) @DefaultValue("1") int decodeHeadroomPages,
                         @Min(0) @DefaultValue("8") int maxPreemptions,
                         @DefaultValue("true") boolean prefixCache) {
        @AssertTrue(message = "pagewarden.engine.nodes needs pagewarden.engine.tls-dir (PAGEWARDEN_ENGINE_TLS_DIR): "
                + "the pki folder with ca.crt and the platform's certificate and key")
        public boolean isTlsDirGivenForNodes() {
            return !hasNodes() || tlsDir != null;
        }

        /** Whether requests are served from engine nodes rather than an engine in this process. */
        public boolean hasNodes() {
            return nodes != null && !nodes.isBlank();
        }

        /**
         * The node id in use: {@code nodeId}, or the host name when it is unset. Throws naming the setting when the
         * host name is no valid node id (an empty one, more than 63 characters, others than
         * letters, digits, '.', '_' and '-').
         */
        public String node() {
            return nodeOr(nodeId, ServingIdentity.hostName());
        }

        /** {@code nodeId} when set, else {@code host} if it is a valid node id; see {@link #node()}. */
        public static String nodeOr(String nodeId, String host) {
            if (nodeId != null && !nodeId.isEmpty()) {
                return nodeId;
            }
            if (!ServingIdentity.isNodeName(host)) {
                throw new IllegalStateException("pagewarden.engine.node-id (PAGEWARDEN_NODE_ID) is unset and the host name '"
                        + host + "' is no valid node id (1 to " + ServingIdentity.NODE_NAME_MAX + " letters, digits, '.', '_' or '-'): "
                        + "set PAGEWARDEN_NODE_ID to a name unique among the replicas that share the database");
            }
            return host;
        }

        @AssertTrue(message = "pagewarden.engine.capacity-policy must be strict or clamp")
        public boolean isKnownPolicy() {
            return "strict".equals(capacityPolicy) || "clamp".equals(capacityPolicy);
        }
    }

    /**
     * The lineage journal (local, fsynced) in front of PostgreSQL, and how long lineage is kept. Receipt keys:
     * {@code receiptKeyTimeout} bounds each statement on {@code receipt_keys} (registration at start, lookups),
     * {@code receiptKeyCache} how long a looked-up key is reused (a retirement shows on other replicas after it).
     */
    public record Audit(Path journalDir, @NotNull @DefaultValue("2GB") DataSize journalCap,
                        @Min(1) @DefaultValue("30") int retentionDays,
                        Path keysDir,
                        @NotNull @DefaultValue("5s") Duration receiptKeyTimeout,
                        @NotNull @DefaultValue("60s") Duration receiptKeyCache) {
        @AssertTrue(message = "pagewarden.audit.receipt-key-timeout must be at least 1s and receipt-key-cache not negative")
        public boolean isReceiptKeyTimingValid() {
            return receiptKeyTimeout == null || receiptKeyCache == null
                    || (receiptKeyTimeout.compareTo(Duration.ofSeconds(1)) >= 0 && !receiptKeyCache.isNegative());
        }
    }

    /** The embedded PostgreSQL used when no {@code spring.datasource.url} is set. */
    public record Database(Path embeddedDir, @Min(0) @DefaultValue("0") int embeddedPort) {
    }

    /** SIGTERM: stop admitting, let running requests finish within {@code grace}, abort the rest. */
    public record Shutdown(@NotNull @DefaultValue("20s") Duration grace) {
    }

    /**
     * The incident-replay lab's fault switches ({@code skip-capacity-check}, {@code corrupt-transfer-byte},
     * {@code delay-transfer-writes=STEPS}, ...). Never for production: faults are refused unless {@code enabled}, and a lab engine says so loudly.
     */
    public record Lab(@DefaultValue("false") boolean enabled, @DefaultValue java.util.List<String> faults) {
        @AssertTrue(message = "pagewarden.lab.faults are refused unless pagewarden.lab.enabled=true")
        public boolean isFaultsOnlyInLab() {
            return enabled || faults.isEmpty();
        }
    }

    @AssertTrue(message = "pagewarden.lab.enabled and pagewarden.engine.nodes are exclusive: the lab needs the "
            + "engine in this process")
    public boolean isLabWithoutNodes() {
        return !lab.enabled() || !engine.hasNodes();
    }

    public Path journalDir() {
        return audit.journalDir() != null ? audit.journalDir() : home.resolve("journal");
    }

    public Path keysDir() {
        return audit.keysDir() != null ? audit.keysDir() : home.resolve("keys");
    }

    public Path embeddedDbDir() {
        return database.embeddedDir() != null ? database.embeddedDir() : home.resolve("pg");
    }

    public Path modelsDir() {
        return home.resolve("models");
    }
}
