package dev.pagewarden.platform.engine;

import dev.pagewarden.core.faultlab.FaultLab;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The lab is installed deliberately: lab mode without it stops the start with how to install it, and with
 * the lab off nothing of it is loaded even when it is on the class path.
 */
class LabModeInstallTest {

    /** The test class path, recording which lab classes are asked for, and optionally without the lab's service file. */
    static final class Loader extends ClassLoader {
        final Set<String> labClasses = ConcurrentHashMap.newKeySet();
        private final boolean withLab;

        Loader(boolean withLab) {
            super(LabModeInstallTest.class.getClassLoader());
            this.withLab = withLab;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("dev.pagewarden.lab.")) {
                labClasses.add(name);
            }
            return super.loadClass(name, resolve);
        }

        @Override
        public URL getResource(String name) {
            return !withLab && name.equals(FaultLab.SERVICE_FILE) ? null : super.getResource(name);
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            return !withLab && name.equals(FaultLab.SERVICE_FILE) ? Collections.emptyEnumeration() : super.getResources(name);
        }
    }

    @Test
    void labModeWithoutTheLabInstalledRefusesToStartAndSaysHowToInstallIt() {
        Loader noLab = new Loader(false);
        assertThatThrownBy(() -> new LabMode(new PagewardenProperties.Lab(true, List.of()), noLab))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not installed")
                .hasMessageContaining("-Dloader.path=PATH/pagewarden-lab.jar")
                .hasMessageContaining("docs/incident-replay.md");
        LabMode off = new LabMode(new PagewardenProperties.Lab(false, List.of()), noLab);
        assertThat(off.installed()).isFalse();
        assertThat(off.enabled()).isFalse();
    }

    @Test
    void labOffLoadsNothingOfTheLabEvenWhenInstalled() {
        Loader withLab = new Loader(true);
        LabMode off = new LabMode(new PagewardenProperties.Lab(false, List.of()), withLab);
        assertThat(off.installed()).isTrue();
        assertThat(off.lab()).isEmpty();
        assertThat(off.engine()).isEmpty();
        assertThat(withLab.labClasses).isEmpty();

        LabMode on = new LabMode(new PagewardenProperties.Lab(true, List.of("corrupt-transfer-byte")), withLab);
        assertThat(withLab.labClasses).as("lab mode loads the installed lab").isNotEmpty();
        assertThat(on.enabled()).isTrue();
        assertThat(on.engine().orElseThrow().faults()).containsExactly("corrupt-transfer-byte");
        assertThat(on.lab().orElseThrow().scenarios()).contains("clean", "incident-2026");
    }

    @Test
    void aFaultTheLabDoesNotKnowStopsTheStart() {
        assertThatThrownBy(() -> new LabMode(new PagewardenProperties.Lab(true, List.of("no-such-fault")), new Loader(true)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("pagewarden.lab.faults: unknown lab fault 'no-such-fault'");
    }
}
