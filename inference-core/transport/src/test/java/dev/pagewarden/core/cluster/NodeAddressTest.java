package dev.pagewarden.core.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeAddressTest {

    @Test
    void parsesRolesHostsAndPorts() {
        assertThat(NodeAddress.parseList(" prefill@10.0.0.5:7400, decode@decode.svc:7401,decode@[::1]:7402"))
                .containsExactly(new NodeAddress(NodeRole.PREFILL, "10.0.0.5", 7400),
                        new NodeAddress(NodeRole.DECODE, "decode.svc", 7401),
                        new NodeAddress(NodeRole.DECODE, "::1", 7402));
        assertThat(NodeAddress.parse("decode@[::1]:7402")).hasToString("decode@[::1]:7402");
    }

    @Test
    void aDnsEntryIsANameWhoseAddressesAreTheNodes() {
        assertThat(NodeAddress.parseList("prefill@dns:prefill.pw.svc.cluster.local:7400,decode@dns:decode:7401"))
                .containsExactly(new NodeAddress(NodeRole.PREFILL, "prefill.pw.svc.cluster.local", 7400, true),
                        new NodeAddress(NodeRole.DECODE, "decode", 7401, true));
        assertThat(NodeAddress.parse("decode@dns:decode:7401")).hasToString("decode@dns:decode:7401");
        assertThatThrownBy(() -> NodeAddress.parse("decode@dns:decode")).hasMessageContaining("'decode@dns:decode'")
                .hasMessageContaining("expected dns:NAME:port");
        assertThatThrownBy(() -> NodeAddress.parse("decode@dns::7401")).hasMessageContaining("'decode@dns::7401'")
                .hasMessageContaining("expected dns:NAME:port");
        assertThatThrownBy(() -> NodeAddress.parse("decode@dns:[::1]:7401")).hasMessageContaining("'decode@dns:[::1]:7401'")
                .hasMessageContaining("not an address");
        assertThatThrownBy(() -> NodeAddress.parse("decode@dns: :7401")).hasMessageContaining("'decode@dns: :7401'")
                .hasMessageContaining("without a host");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x:1,decode@y:2,decode@dns:y:2")).hasMessageContaining("listed twice");
    }

    @Test
    void saysWhatIsWrong() {
        assertThatThrownBy(() -> NodeAddress.parseList("")).hasMessageContaining("no engine nodes given");
        assertThatThrownBy(() -> NodeAddress.parseList("10.0.0.5:7400,decode@x:1")).hasMessageContaining("lacks its role");
        assertThatThrownBy(() -> NodeAddress.parseList("encode@x:1,decode@y:2")).hasMessageContaining("unknown node role 'encode'");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x,decode@y:2")).hasMessageContaining("expected host:port");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x:http,decode@y:2")).hasMessageContaining("port 'http' is not a number");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x:70000,decode@y:2")).hasMessageContaining("outside 1..65535")
                .hasMessageContaining("'prefill@x:70000'");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x:1,,decode@y:2")).hasMessageContaining("empty entry");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x:1,decode@y:2,prefill@x:1")).hasMessageContaining("listed twice");
        assertThatThrownBy(() -> NodeAddress.parseList("prefill@x:1")).hasMessageContaining("has no decode node");
    }

    @Test
    void aNameWithSeveralAddressesIsSeveralNodes(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        NodeAddress decode = new NodeAddress(NodeRole.DECODE, "localhost", 7401);
        List<String> addresses = decode.resolve();
        assertThat(addresses).isNotEmpty().doesNotHaveDuplicates();
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (ClusterEngine cluster = pki.client(List.of(new NodeAddress(NodeRole.PREFILL, "127.0.0.1", 7400), decode))) {
            // one node per address the name resolves to, plus the prefill node
            assertThat(cluster.members()).hasSize(addresses.size() + 1)
                    .allMatch(m -> m.startsWith("prefill@127.0.0.1:7400") || m.startsWith("decode@"));
        }
    }
}
