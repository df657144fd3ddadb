package dev.pagewarden.incident.disclosure;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Where a webhook may point (SSRF guard): the URL's form when a tenant registers it, and every
 * address its host resolves to when a notice is delivered (the name may resolve elsewhere by then).
 * Loopback, private (RFC 1918, carrier-grade NAT, IPv6 unique-local) and link-local targets are
 * refused unless {@code pagewarden.webhooks.allow-private-addresses}; unspecified, broadcast,
 * multicast, reserved and cloud metadata addresses are always refused.
 */
public final class WebhookTargets {
    /** Instance metadata endpoints (AWS, ECS, AWS IPv6, Alibaba, Oracle): never a webhook, whatever the setting. */
    private static final Set<String> METADATA = Set.of("169.254.169.254", "169.254.170.2", "fd00:ec2:0:0:0:0:0:254",
            "100.100.100.200", "192.0.0.192");

    private WebhookTargets() {
    }

    /** Checks a URL a tenant registers; returns it normalised, or throws with the reason (names {@code 'url'}). */
    public static URI checkUrl(String url, boolean allowHttp, boolean allowPrivate) {
        URI uri;
        try {
            uri = new URI(url == null ? "" : url.strip());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'url' is not a valid URL: " + e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(allowHttp && scheme.equals("http"))) {
            throw new IllegalArgumentException(scheme.equals("http")
                    ? "'url' must use https: plain http webhooks are not allowed on this server"
                    : "'url' must be an absolute https URL");
        }
        if (uri.getRawUserInfo() != null || uri.getRawAuthority() != null && uri.getRawAuthority().contains("@")) {
            throw new IllegalArgumentException("'url' must not contain a user name or password");
        }
        String host = uri.getHost() != null ? uri.getHost() : numericAuthority(uri);
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("'url' must name a host");
        }
        String lower = host.toLowerCase(Locale.ROOT);
        if (!allowPrivate && (lower.equals("localhost") || lower.endsWith(".localhost") || lower.equals("localhost."))) {
            throw new IllegalArgumentException("'url' points to a loopback host (" + host + ")");
        }
        Optional<InetAddress> literal = literal(host);
        if (literal.isPresent()) {
            InetAddress address = literal.get();
            refusal(address, allowPrivate).ifPresent(reason -> {
                throw new IllegalArgumentException("'url' points to " + reason);
            });
            if (address instanceof Inet4Address && !host.equals(address.getHostAddress())) {
                // 2130706433, 0x7f.1, 0177.0.0.1: resolvers disagree on these, so only dotted decimal is accepted
                throw new IllegalArgumentException("'url' host '" + host + "' is an IPv4 address in a non-standard form: "
                        + "write it as dotted decimal (" + address.getHostAddress() + ")");
            }
        }
        return uri;
    }

    /**
     * {@link URI} leaves the host empty for IPv4 forms it does not accept ({@code 0x7f.1}, {@code 127.1}):
     * the authority's host part, so that these are judged as the addresses they are.
     */
    private static String numericAuthority(URI uri) {
        String authority = uri.getRawAuthority();
        if (authority == null) {
            return null;
        }
        String host = authority.replaceFirst(":[0-9]*$", "");
        return host.matches("[0-9a-fA-FxX.]+") ? host : null;
    }

    /**
     * The host as an IP address when it is written as one: bracketed IPv6, or IPv4 in any form a C
     * resolver accepts (dotted decimal, one 32-bit number, hex {@code 0x7f.1}, octal {@code 0177.0.0.1}).
     */
    static Optional<InetAddress> literal(String host) {
        if (host.startsWith("[") && host.endsWith("]")) {
            try {
                return Optional.of(Inet6Address.ofLiteral(host.substring(1, host.length() - 1)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'url' host '" + host + "' is not a valid IPv6 address");
            }
        }
        try {
            return Optional.of(Inet4Address.ofPosixLiteral(host));
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // a name
        }
    }

    /** Why a webhook may not go to this address ("a loopback address (127.0.0.1)"), or empty when it may. */
    public static Optional<String> refusal(InetAddress address, boolean allowPrivate) {
        InetAddress a = embeddedIpv4(address).orElse(address);
        String text = a.getHostAddress();
        String kind = kind(a);
        if (kind == null || allowPrivate && (kind.equals("loopback") || kind.startsWith("private") || kind.equals("link-local"))) {
            return Optional.empty();
        }
        return Optional.of("a" + (kind.matches("^[aeiou].*") ? "n " : " ") + kind + " address (" + text + ")");
    }

    private static String kind(InetAddress a) {
        byte[] b = a.getAddress();
        if (METADATA.contains(a.getHostAddress())) {
            return "cloud metadata";
        }
        if (a.isAnyLocalAddress()) {
            return "unspecified";
        }
        if (a.isMulticastAddress()) {
            return "multicast";
        }
        if (a.isLoopbackAddress()) {
            return "loopback";
        }
        if (a.isLinkLocalAddress()) {
            return "link-local";
        }
        if (a instanceof Inet4Address) {
            int b0 = b[0] & 0xff, b1 = b[1] & 0xff, b2 = b[2] & 0xff;
            if (b0 == 255 && b1 == 255 && b2 == 255 && (b[3] & 0xff) == 255) {
                return "broadcast";
            }
            if (b0 == 0) {
                return "unspecified";
            }
            if (b0 >= 240 || b0 == 192 && b1 == 0 && b2 == 0 || b0 == 198 && (b1 & 0xfe) == 18) {
                return "reserved";
            }
            if (b0 == 10 || b0 == 172 && (b1 & 0xf0) == 16 || b0 == 192 && b1 == 168) {
                return "private";
            }
            if (b0 == 100 && (b1 & 0xc0) == 64) {
                return "private (carrier-grade NAT)";
            }
            return null;
        }
        if ((b[0] & 0xfe) == 0xfc) {
            return "private (unique local)";
        }
        if (a.isSiteLocalAddress()) {
            return "private (site-local)";
        }
        return null;
    }

    /** The IPv4 address inside an IPv4-compatible ({@code ::a.b.c.d}) or NAT64 ({@code 64:ff9b::a.b.c.d}) address. */
    private static Optional<InetAddress> embeddedIpv4(InetAddress address) {
        if (!(address instanceof Inet6Address v6)) {
            return Optional.empty();
        }
        byte[] b = v6.getAddress();
        boolean compatible = true;
        for (int i = 0; i < 12; i++) {
            compatible &= b[i] == 0;
        }
        boolean nat64 = (b[0] & 0xff) == 0x00 && (b[1] & 0xff) == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b;
        for (int i = 4; nat64 && i < 12; i++) {
            nat64 = b[i] == 0;
        }
        if (compatible && (b[12] | b[13] | b[14]) == 0) {
            return Optional.empty(); // :: and ::1 are IPv6's own unspecified and loopback addresses
        }
        if (!compatible && !nat64) {
            return Optional.empty();
        }
        try {
            return Optional.of(InetAddress.getByAddress(new byte[]{b[12], b[13], b[14], b[15]}));
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
