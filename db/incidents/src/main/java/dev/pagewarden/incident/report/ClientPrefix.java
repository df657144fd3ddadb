package dev.pagewarden.incident.report;

import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * The part of a client address that names one client for the report limits and challenges: an IPv4 address
 * whole, an IPv6 address by its /64 (one subscriber's network: a single host can use any of its 2^64 addresses).
 */
public final class ClientPrefix {
    private ClientPrefix() {
    }

    /** {@code 2001:db8:1:2::/64} for any address in that network, the address itself for IPv4; other text as given. */
    public static String of(String address) {
        if (address == null || address.isBlank()) {
            return "unknown";
        }
        InetAddress parsed;
        try {
            parsed = InetAddress.ofLiteral(address.strip()); // a literal only: never a name lookup
        } catch (IllegalArgumentException e) {
            return address;
        }
        if (!(parsed instanceof Inet6Address)) {
            return parsed.getHostAddress();
        }
        byte[] b = parsed.getAddress();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i += 2) {
            sb.append(Integer.toHexString(((b[i] & 0xff) << 8) | (b[i + 1] & 0xff))).append(':');
        }
        return sb.append(":/64").toString();
    }
}
