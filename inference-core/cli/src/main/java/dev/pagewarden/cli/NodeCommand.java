package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.cluster.DecodeNode;
import dev.pagewarden.core.cluster.NodeOptions;
import dev.pagewarden.core.cluster.NodeRole;
import dev.pagewarden.core.cluster.PrefillNode;
import dev.pagewarden.core.engine.CapacityPolicy;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.transfer.net.ClusterTls;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * {@code node}: one engine node - a prefill node or a decode node - serving until SIGTERM or an interrupt,
 * then closing cleanly. Its page life steps go to the platform over the control connection (kept here until
 * acknowledged, up to {@code --lineage-buffer} of them); no journal is written on the node.
 */
final class NodeCommand implements Command {

    @Override
    public String name() {
        return "node";
    }

    @Override
    public String usage() {
        return "node --role prefill|decode --listen HOST:PORT --model M [--tokenizer T] --tls DIR --name NAME "
                + "[--advertise HOST (how other nodes reach this one; default the listen host)] [--threads N] "
                + "[--heartbeat-ms N (default 500)] [--timeout-ms N (default 10000)] [--backend cpu|gpu|auto] "
                + "[--page-tokens N] [--context-window N] [--kv-bytes N | --pool-tokens N (this node's pool)] "
                + "[--max-batch N] [--max-queue N] [--prefill-chunk-tokens N] [--capacity-policy strict|clamp] "
                + "[--transfer-start-timeout-ms N] [--prefix-cache on|off (prefill: keep and reuse prompt pages per "
                + "tenant scope; default off)] [--decode-headroom-pages N|whole (decode: pages reserved beyond the "
                + "prompt's, decode taking more as it goes and preempting the youngest request, re-prefilled later, "
                + "when none is left; default whole: prompt + max tokens at once)] [--max-preemptions N (decode: then "
                + "the request fails with preempted_too_often; default 8)] [--lineage-buffer N (page life steps kept until the platform "
                + "acknowledges them; at N the node admits nothing new; default 65536)] [--platform NAME[,NAME] (the "
                + "platform's certificate name(s): only they get the node's lineage; default platform)]";
    }

    private static boolean onOff(String name, String v) {
        return switch (v) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new Args.UsageException("--" + name + " wants on or off, got '" + v + "'");
        };
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        NodeRole role = role(args.required("role"));
        String listen = args.required("listen");
        Path modelPath = args.existingModel("model");
        Path tokenizer = args.optionalExistingFile("tokenizer");
        Path pki = Path.of(args.required("tls"));
        String name = args.required("name");
        int colon = listen.lastIndexOf(':');
        if (colon <= 0) {
            throw new Args.UsageException("--listen wants HOST:PORT, got '" + listen + "'");
        }
        String host = listen.substring(0, colon).replace("[", "").replace("]", "");
        int port;
        try {
            port = Integer.parseInt(listen.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new Args.UsageException("--listen port '" + listen.substring(colon + 1) + "' is not a number");
        }
        String advertise = args.string("advertise", host);
        int heartbeat = args.integer("heartbeat-ms", (int) NodeOptions.DEFAULT_HEARTBEAT.toMillis());
        int timeout = args.integer("timeout-ms", (int) NodeOptions.DEFAULT_TIMEOUT.toMillis());
        int lineageBuffer = args.integer("lineage-buffer", NodeOptions.DEFAULT_LINEAGE_BUFFER);
        java.util.Set<String> platforms = java.util.Set.copyOf(java.util.Arrays.asList(
                args.string("platform", NodeOptions.DEFAULT_PLATFORM).split(",")));
        EngineConfig.Builder config = EngineConfig.builder()
                .backend(args.string("backend", "auto"))
                .threads(args.integer("threads", 0))
                .pageTokens(args.integer("page-tokens", 16))
                .contextWindow(args.integer("context-window", 0))
                .maxBatch(args.integer("max-batch", 32))
                .maxQueue(args.integer("max-queue", 256))
                .prefillChunkTokens(args.integer("prefill-chunk-tokens", 256))
                .capacityPolicy(policy(args.string("capacity-policy", "strict")))
                .transferStartTimeout(Duration.ofMillis(args.integer("transfer-start-timeout-ms", 30_000)))
                .prefixCache(onOff("prefix-cache", args.string("prefix-cache", "off")))
                .maxPreemptions(args.integer("max-preemptions", 8));
        String headroom = args.string("decode-headroom-pages", "whole");
        try {
            config.decodeHeadroomPages(headroom.equals("whole") ? EngineConfig.FULL_RESERVATION : Integer.parseInt(headroom));
        } catch (NumberFormatException e) {
            throw new Args.UsageException("--decode-headroom-pages wants a number or 'whole', got '" + headroom + "'");
        }
        long kvBytes = args.longValue("kv-bytes", 0);
        int poolTokens = args.integer("pool-tokens", 0);
        args.rejectUnknown();
        if (kvBytes > 0 && poolTokens > 0) {
            throw new Args.UsageException("give --kv-bytes or --pool-tokens, not both");
        }
        switch (role) {
            case PREFILL -> config.kvBytes(kvBytes, 0).poolTokens(poolTokens, 0);
            case DECODE -> config.kvBytes(0, kvBytes).poolTokens(0, poolTokens);
        }
        NodeOptions options = new NodeOptions(name, host, port, advertise, Duration.ofMillis(heartbeat),
                Duration.ofMillis(timeout), lineageBuffer, platforms);
        ClusterTls tls = ClusterTls.load(pki, name);

        try (LoadedModel model = ModelLoader.load(modelPath, tokenizer)) {
            CountDownLatch stopped = new CountDownLatch(1);
            AutoCloseable node;
            int bound;
            int window;
            String modelId;
            switch (role) {
                case PREFILL -> {
                    PrefillNode n = PrefillNode.start(model, config.build(), options, tls, LineageSink.NONE);
                    node = n;
                    bound = n.port();
                    window = n.contextWindow();
                    modelId = n.modelId();
                }
                case DECODE -> {
                    DecodeNode n = DecodeNode.start(model, config.build(), options, tls, LineageSink.NONE);
                    node = n;
                    bound = n.port();
                    window = n.contextWindow();
                    modelId = n.modelId();
                }
                default -> throw new IllegalStateException(role.toString());
            }
            Thread hook = new Thread(() -> {
                try {
                    node.close();
                } catch (Exception e) {
                    err.println("error closing node " + name + ": " + e.getMessage());
                } finally {
                    stopped.countDown();
                }
            }, "pagewarden-node-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            out.printf(Locale.ROOT, "node %s (%s) listening on %s:%d, model %s, window %d tokens%n", name, role.label(),
                    host, bound, modelId, window);
            out.flush();
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Runtime.getRuntime().removeShutdownHook(hook);
                node.close();
                Thread.currentThread().interrupt();
            }
        }
        return 0;
    }

    private static NodeRole role(String s) {
        try {
            return NodeRole.parse(s);
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException(e.getMessage());
        }
    }

    private static CapacityPolicy policy(String s) {
        try {
            return CapacityPolicy.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException("--capacity-policy must be strict or clamp, got '" + s + "'");
        }
    }
}
