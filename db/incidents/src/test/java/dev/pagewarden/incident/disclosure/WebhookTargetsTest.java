package dev.pagewarden.incident.disclosure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which webhook URLs and addresses are refused, and why (no traffic: pure parsing). */
class WebhookTargetsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "http://hooks.example.com/x              | must use https",
            "ftp://hooks.example.com/x               | absolute https URL",
            "/relative                               | absolute https URL",
            "https://user:pw@hooks.example.com/x     | user name or password",
            "https://127.0.0.1:8080@hooks.example.com/ | user name or password",
            "https://localhost/x                     | loopback host",
            "https://api.localhost/x                 | loopback host",
            "https://127.0.0.1:8080/admin/api/tenants | loopback address (127.0.0.1)",
            "https://2130706433/                     | loopback address (127.0.0.1)",
            "https://0x7f.1/                         | loopback address (127.0.0.1)",
            "https://0177.0.0.1/                     | loopback address (127.0.0.1)",
            "https://127.1/                          | loopback address (127.0.0.1)",
            "https://10.1.2.3/                       | private address (10.1.2.3)",
            "https://172.16.0.1/                     | private address (172.16.0.1)",
            "https://192.168.1.1/                    | private address (192.168.1.1)",
            "https://100.64.0.1/                     | private (carrier-grade NAT) address (100.64.0.1)",
            "https://169.254.1.1/                    | link-local address (169.254.1.1)",
            "https://169.254.169.254/latest/meta-data | cloud metadata address (169.254.169.254)",
            "https://100.100.100.200/                | cloud metadata address (100.100.100.200)",
            "https://0.0.0.0/                        | unspecified address (0.0.0.0)",
            "https://255.255.255.255/                | broadcast address",
            "https://224.0.0.1/                      | multicast address",
            "https://[::1]/                          | loopback address",
            "https://[::]/                           | unspecified address",
            "https://[fc00::1]/                      | private (unique local) address",
            "https://[fd12:3456::1]/                 | private (unique local) address",
            "https://[fe80::1]/                      | link-local address",
            "https://[ff02::1]/                      | multicast address",
            "https://[::ffff:127.0.0.1]/             | loopback address (127.0.0.1)",
            "https://[::ffff:169.254.169.254]/       | cloud metadata address (169.254.169.254)",
            "https://[::127.0.0.1]/                  | loopback address (127.0.0.1)",
            "https://[64:ff9b::10.0.0.1]/            | private address (10.0.0.1)",
            "https://[fd00:ec2::254]/                | cloud metadata address",
            "https://134744072/                      | non-standard form: write it as dotted decimal (8.8.8.8)",
    })
    void refusedAtRegistrationWithTheReason(String url, String reason) {
        assertThatThrownBy(() -> WebhookTargets.checkUrl(url, false, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("'url'").hasMessageContaining(reason);
    }

    @Test
    void publicHttpsUrlsAreAccepted() {
        assertThat(WebhookTargets.checkUrl(" https://hooks.example.com/pagewarden?x=1 ", false, false))
                .hasToString("https://hooks.example.com/pagewarden?x=1");
        assertThat(WebhookTargets.checkUrl("https://8.8.8.8:8443/h", false, false).getHost()).isEqualTo("8.8.8.8");
        assertThat(WebhookTargets.checkUrl("https://[2001:4860:4860::8888]/h", false, false).getPort()).isEqualTo(-1);
    }

    @Test
    void operatorSettingsLiftHttpAndPrivateButNeverMetadataMulticastOrUnspecified() {
        assertThat(WebhookTargets.checkUrl("http://127.0.0.1:9000/hook", true, true).getPort()).isEqualTo(9000);
        assertThat(WebhookTargets.checkUrl("http://localhost:9000/hook", true, true).getHost()).isEqualTo("localhost");
        assertThat(WebhookTargets.checkUrl("https://10.0.0.7/hook", false, true).getHost()).isEqualTo("10.0.0.7");
        assertThatThrownBy(() -> WebhookTargets.checkUrl("http://127.0.0.1/hook", false, true)).hasMessageContaining("https");
        assertThatThrownBy(() -> WebhookTargets.checkUrl("http://10.0.0.7/hook", true, false)).hasMessageContaining("private");
        for (String url : new String[]{"http://169.254.169.254/", "http://0.0.0.0/", "http://224.0.0.1/", "http://[ff02::1]/"}) {
            assertThatThrownBy(() -> WebhookTargets.checkUrl(url, true, true)).as(url).hasMessageContaining("'url' points to");
        }
    }

    @Test
    void resolvedAddressesAreCheckedTheSameWay() throws Exception {
        assertThat(WebhookTargets.refusal(InetAddress.getByName("93.184.215.14"), false)).isEmpty();
        assertThat(WebhookTargets.refusal(InetAddress.getByName("192.168.0.10"), false)).contains("a private address (192.168.0.10)");
        assertThat(WebhookTargets.refusal(InetAddress.getByName("192.168.0.10"), true)).isEmpty();
        assertThat(WebhookTargets.refusal(InetAddress.getByName("169.254.169.254"), true))
                .contains("a cloud metadata address (169.254.169.254)");
    }
}
