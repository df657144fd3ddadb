package dev.pagewarden.platform.engine;

import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static dev.pagewarden.platform.testing.PropertiesBinding.bind;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A node list or pki folder the platform cannot use stops its start with a message naming the setting. */
class EngineNodesStartTest {
    @TempDir
    Path pki;

    private PagewardenProperties.Engine engine(String nodes) {
        return bind(Map.of("pagewarden.engine.nodes", nodes, "pagewarden.engine.tls-dir", pki.toString())).engine();
    }

    @Test
    void aMalformedNodeListNamesTheSetting() {
        assertThatThrownBy(() -> EngineHost.connect(engine("prefill@127.0.0.1"), 1, LineageSink.NONE, null))
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("pagewarden.engine.nodes: ");
        assertThatThrownBy(() -> EngineHost.connect(engine("gpu@127.0.0.1:7400"), 1, LineageSink.NONE, null))
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("pagewarden.engine.nodes: ");
    }

    @Test
    void aPkiFolderWithoutThePlatformsCertificateNamesTheSettingAndTheName() {
        assertThatThrownBy(() -> EngineHost.connect(engine("prefill@127.0.0.1:7400,decode@127.0.0.1:7401"), 1, LineageSink.NONE, null))
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("pagewarden.engine.tls-dir: ")
                .hasMessageContaining("'platform'").hasMessageContaining(pki.toString());
    }
}
