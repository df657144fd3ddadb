package dev.pagewarden.platform.security;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Component;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The client's address for per-address limits: the TCP peer, or - only when the peer is one of
 * {@code pagewarden.http.trusted-proxies} (addresses or CIDRs, none by default) - the nearest
 * {@code X-Forwarded-For} hop that is not itself a trusted proxy. A forged header from anyone else
 * is ignored. Pure parsing of address literals: never a DNS lookup.
 */
@Component
public class ClientAddress {
    static final String PROPERTY = "pagewarden.http.trusted-proxies";

    private final List<Range> trusted = new ArrayList<>();

    @Autowired
    public ClientAddress(Environment env) {
        this(Binder.get(env).bind(PROPERTY, Bindable.listOf(String.class)).orElse(List.of()));
    }

    ClientAddress(List<String> trustedProxies) {
        for (String entry : trustedProxies) {
            String cidr = entry.strip();
            if (cidr.isEmpty()) {
                continue;
            }
            try {
                trusted.add(Range.parse(cidr));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(PROPERTY + ": '" + entry + "' is not an IP address or CIDR range", e);
            }
        }
    }

    /** The client's address as text ({@code 203.0.113.7}); "unknown" without a peer address. */
    public String of(ServerHttpRequest request) {
        InetSocketAddress peer = request.getRemoteAddress();
        if (peer == null || peer.getAddress() == null) {
            return "unknown";
        }
        InetAddress client = peer.getAddress();
        List<String> hops = new ArrayList<>();
        for (String header : request.getHeaders().getOrDefault("X-Forwarded-For", List.of())) {
            for (String hop : header.split(",")) {
                hops.add(hop.strip());
            }
        }
        // right to left: each hop was added by the proxy before it; stop at the first we cannot vouch for
        for (int i = hops.size() - 1; i >= 0 && isTrusted(client); i--) {
            try {
                client = literal(hops.get(i));
            } catch (IllegalArgumentException e) {
                break;
            }
        }
        return client.getHostAddress();
    }

    private boolean isTrusted(InetAddress address) {
        return trusted.stream().anyMatch(r -> r.contains(address));
    }

    /** An address or CIDR range ({@code 10.0.0.0/8}, {@code fd00::/8}). */
    private record Range(byte[] network, int prefix) {
        static Range parse(String cidr) {
            int slash = cidr.indexOf('/');
            byte[] network = literal(slash < 0 ? cidr : cidr.substring(0, slash)).getAddress();
            int prefix = slash < 0 ? network.length * 8 : Integer.parseInt(cidr.substring(slash + 1));
            if (prefix < 0 || prefix > network.length * 8) {
                throw new IllegalArgumentException("prefix out of range");
            }
            return new Range(network, prefix);
        }

        boolean contains(InetAddress address) {
            byte[] a = address.getAddress();
            if (a.length != network.length) {
                return false;
            }
            for (int bit = 0; bit < prefix; bit++) {
                int mask = 0x80 >>> (bit % 8);
                if ((a[bit / 8] & mask) != (network[bit / 8] & mask)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** An IP literal, bracketed IPv6 allowed; anything else (a name) is refused rather than resolved. */
    private static InetAddress literal(String text) {
        String bare = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        return InetAddress.ofLiteral(bare);
    }
}
