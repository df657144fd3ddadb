package dev.pagewarden.core.receipt;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Which process served a request, as a version 2 receipt names it: the node (machine) and the
 * replica (one engine start on it). Page epochs are only unique within one replica's pools, so with
 * several nodes a receipt's reads need both to name the pages unambiguously.
 *
 * @param nodeId    the node: configured, else the host name
 * @param replicaId the engine start: configured, else random per start
 */
public record ServingIdentity(String nodeId, String replicaId) {
    /** Longest id in UTF-8 bytes (they travel in every receipt header). */
    public static final int MAX_ID_BYTES = 128;
    /** Characters of a node name that lineage rows carry (what host and pod names are made of). */
    public static final String NODE_NAME_CHARS = "[A-Za-z0-9._-]";
    /** Longest node name: a DNS label. */
    public static final int NODE_NAME_MAX = 63;

    /** Whether {@code s} is a node name: 1 to {@value #NODE_NAME_MAX} of {@value #NODE_NAME_CHARS}. */
    public static boolean isNodeName(String s) {
        return s != null && !s.isEmpty() && s.length() <= NODE_NAME_MAX && s.matches(NODE_NAME_CHARS + "+");
    }

    public ServingIdentity {
        nodeId = check("node_id", nodeId);
        replicaId = check("replica_id", replicaId);
    }

    /** This process: {@code nodeId} (null or blank: the host name) and {@code replicaId} (null or blank: a new random id). */
    public static ServingIdentity of(String nodeId, String replicaId) {
        return new ServingIdentity(blank(nodeId) ? hostName() : nodeId, blank(replicaId) ? randomReplicaId() : replicaId);
    }

    /** Checks configured ids before use: each null/blank (= the default) or a valid id; names the bad one. */
    public static void validate(String nodeId, String replicaId) {
        if (!blank(nodeId)) {
            check("node_id", nodeId);
        }
        if (!blank(replicaId)) {
            check("replica_id", replicaId);
        }
    }

    /** A fresh replica id: "r-" and 16 random hex digits. */
    public static String randomReplicaId() {
        byte[] b = new byte[8];
        new SecureRandom().nextBytes(b);
        return "r-" + HexFormat.of().formatHex(b);
    }

    /** The host name, or "localhost" when the system cannot say. */
    public static String hostName() {
        return HostName.VALUE;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static String check(String name, String id) {
        if (blank(id)) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
        if (id.getBytes(StandardCharsets.UTF_8).length > MAX_ID_BYTES) {
            throw new IllegalArgumentException(name + " is longer than " + MAX_ID_BYTES + " bytes");
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isISOControl(c) || Character.isWhitespace(c)) {
                throw new IllegalArgumentException(name + " must not contain whitespace or control characters");
            }
        }
        return id;
    }

    /** Looked up once (the lookup may ask the resolver). */
    private static final class HostName {
        static final String VALUE = lookup();

        private static String lookup() {
            try {
                return check("host name", InetAddress.getLocalHost().getHostName());
            } catch (UnknownHostException | SecurityException | IllegalArgumentException e) {
                return "localhost"; // a node id is still needed
            }
        }
    }
}
