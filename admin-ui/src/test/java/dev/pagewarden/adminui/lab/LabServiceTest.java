package dev.pagewarden.adminui.lab;

import dev.pagewarden.incident.PlatformPort;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A replay is refused, without running anything, when the lab is off - and says so when it is not even installed. */
class LabServiceTest {

    private static PlatformPort platform(boolean enabled, boolean installed) {
        return (PlatformPort) Proxy.newProxyInstance(PlatformPort.class.getClassLoader(), new Class<?>[]{PlatformPort.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "labEnabled" -> enabled;
                    case "labInstalled" -> installed;
                    case "toString" -> "platform";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void notInstalledIsRefusedWithHowToInstallTheLab() {
        LabService lab = new LabService(platform(false, false), null, null);
        assertThatThrownBy(() -> lab.replay("clean", "responder"))
                .isInstanceOf(LabService.LabNotInstalledException.class)
                .hasMessageContaining("the lab is not installed")
                .hasMessageContaining("-Dloader.path=PATH/pagewarden-lab.jar");
    }

    @Test
    void installedButOffIsRefusedAsOff() {
        LabService lab = new LabService(platform(false, true), null, null);
        assertThatThrownBy(() -> lab.replay("clean", "responder"))
                .isExactlyInstanceOf(LabService.LabDisabledException.class)
                .hasMessage("the lab is off: start the platform with pagewarden.lab.enabled=true to replay incidents");
        assertThat(new LabService(platform(true, true), null, null).unavailable()).isNull();
    }
}
