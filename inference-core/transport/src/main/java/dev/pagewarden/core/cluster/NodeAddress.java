package dev.pagewarden.core.cluster;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Where the platform finds engine nodes of one role: a host and port. A host name that resolves to several
 * addresses stands for one node per address. With {@code dns} (written {@code role@dns:NAME:port}) the name
 * is a set of nodes that changes - a Kubernetes headless Service: each time it is resolved again, an address
 * that is gone takes its node out of rotation, where a plain host's addresses stay members once seen.
 */
public record NodeAddress(NodeRole role, String host, int port, boolean dns) {

    public NodeAddress {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("node address without a host");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("node port " + port + " outside 1..65535");
        }
    }

    /** A fixed host (not {@code dns:}). */
    public NodeAddress(NodeRole role, String host, int port) {
        this(role, host, port, false);
    }

    /**
     * Parses {@code "prefill@host:port,decode@host:port,..."}: each entry a role, {@code @}, a host (an IPv6
     * address in brackets, or {@code dns:NAME} for a name whose addresses are the nodes of that role) and a port. Needs at least one node of each role.
     */
    public static List<NodeAddress> parseList(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("no engine nodes given: expected prefill@host:port,decode@host:port,...");
        }
        List<NodeAddress> out = new ArrayList<>();
        for (String raw : spec.split(",")) {
            String entry = raw.strip();
            if (entry.isEmpty()) {
                throw new IllegalArgumentException("empty entry in engine node list '" + spec + "'");
            }
            out.add(parse(entry));
        }
        Set<String> seen = new LinkedHashSet<>();
        for (NodeAddress a : out) {
            // plain or dns:, one name and port is one set of nodes
            if (!seen.add(a.role() + "@" + a.host() + ":" + a.port())) {
                throw new IllegalArgumentException("engine node " + a + " is listed twice");
            }
        }
        for (NodeRole r : NodeRole.values()) {
            if (out.stream().noneMatch(a -> a.role() == r)) {
                throw new IllegalArgumentException("engine node list '" + spec + "' has no " + r.label() + " node");
            }
        }
        return List.copyOf(out);
    }

    /** One entry: {@code role@host:port} or {@code role@dns:NAME:port}. */
    public static NodeAddress parse(String entry) {
        int at = entry.indexOf('@');
        if (at < 0) {
            throw new IllegalArgumentException("engine node '" + entry + "' lacks its role: expected role@host:port, "
                    + "for example prefill@10.0.0.5:7400");
        }
        NodeRole role = NodeRole.parse(entry.substring(0, at));
        String hostPort = entry.substring(at + 1);
        boolean dns = hostPort.startsWith("dns:");
        if (dns) {
            hostPort = hostPort.substring("dns:".length());
            if (hostPort.startsWith("[")) {
                throw new IllegalArgumentException("engine node '" + entry + "': dns: takes a name to resolve, not an address");
            }
        }
        String host;
        String port;
        if (hostPort.startsWith("[")) {
            int close = hostPort.indexOf(']');
            if (close < 0 || close + 1 >= hostPort.length() || hostPort.charAt(close + 1) != ':') {
                throw new IllegalArgumentException("engine node '" + entry + "': expected [ipv6]:port");
            }
            host = hostPort.substring(1, close);
            port = hostPort.substring(close + 2);
        } else {
            int colon = hostPort.lastIndexOf(':');
            if (colon <= 0 || hostPort.indexOf(':') != colon) {
                throw new IllegalArgumentException("engine node '" + entry + "': expected "
                        + (dns ? "dns:NAME:port" : "host:port") + " after the role");
            }
            host = hostPort.substring(0, colon);
            port = hostPort.substring(colon + 1);
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("engine node '" + entry + "': port '" + port + "' is not a number");
        }
        try {
            return new NodeAddress(role, host, p, dns);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("engine node '" + entry + "': " + e.getMessage());
        }
    }

    /** The node's addresses now: one per address the host resolves to. */
    public List<String> resolve() throws UnknownHostException {
        return Resolver.SYSTEM.addresses(host);
    }

    /** Turns a host name into the addresses of its nodes (the system's resolver; tests give their own). */
    @FunctionalInterface
    interface Resolver {
        Resolver SYSTEM = host -> {
            List<String> out = new ArrayList<>();
            for (InetAddress a : InetAddress.getAllByName(host)) {
                out.add(a.getHostAddress());
            }
            return out;
        };

        List<String> addresses(String host) throws UnknownHostException;
    }

    @Override
    public String toString() {
        return role.label() + "@" + (dns ? "dns:" : "") + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
