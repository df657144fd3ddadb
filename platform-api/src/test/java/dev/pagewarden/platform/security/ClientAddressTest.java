package dev.pagewarden.platform.security;

import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** X-Forwarded-For counts only when a configured trusted proxy sent it. */
class ClientAddressTest {

    private static MockServerHttpRequest from(String peer, String... forwardedFor) {
        var request = MockServerHttpRequest.get("/admin/login")
                .remoteAddress(new InetSocketAddress(InetAddress.ofLiteral(peer), 40000));
        for (String h : forwardedFor) {
            request.header("X-Forwarded-For", h);
        }
        return request.build();
    }

    @Test
    void withoutTrustedProxiesThePeerIsTheClientWhateverTheHeaderSays() {
        ClientAddress addresses = new ClientAddress(List.of());
        assertThat(addresses.of(from("203.0.113.5"))).isEqualTo("203.0.113.5");
        assertThat(addresses.of(from("203.0.113.5", "198.51.100.1"))).isEqualTo("203.0.113.5");
    }

    @Test
    void behindATrustedProxyTheNearestUntrustedHopIsTheClient() {
        ClientAddress addresses = new ClientAddress(List.of("10.0.0.0/8", " 192.0.2.10 ", "fd00::/8"));
        assertThat(addresses.of(from("10.1.2.3", "198.51.100.1"))).isEqualTo("198.51.100.1");
        // a client-supplied first entry cannot win: the proxy appended the real peer last
        assertThat(addresses.of(from("10.1.2.3", "1.1.1.1, 198.51.100.1, 10.9.9.9"))).isEqualTo("198.51.100.1");
        assertThat(addresses.of(from("192.0.2.10", "1.1.1.1", "198.51.100.2"))).isEqualTo("198.51.100.2");
        assertThat(addresses.of(from("fd00::5", "[2001:db8::7]"))).isEqualTo("2001:db8:0:0:0:0:0:7");
        // an unparseable hop (or a name) ends the walk at the last address vouched for
        assertThat(addresses.of(from("10.1.2.3", "evil.example, 10.7.7.7"))).isEqualTo("10.7.7.7");
        assertThat(addresses.of(from("10.1.2.3"))).isEqualTo("10.1.2.3");
        // not a trusted peer: its header is ignored
        assertThat(addresses.of(from("198.51.100.9", "10.0.0.1"))).isEqualTo("198.51.100.9");
    }

    @Test
    void badSettingsStopTheStartNamingTheProperty() {
        assertThatThrownBy(() -> new ClientAddress(List.of("10.0.0.0/33")))
                .hasMessageContaining("pagewarden.http.trusted-proxies").hasMessageContaining("10.0.0.0/33");
        assertThatThrownBy(() -> new ClientAddress(List.of("proxy.internal")))
                .hasMessageContaining("pagewarden.http.trusted-proxies");
    }
}
