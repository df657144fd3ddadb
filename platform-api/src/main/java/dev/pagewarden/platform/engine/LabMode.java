package dev.pagewarden.platform.engine;

import dev.pagewarden.core.faultlab.FaultLab;
import dev.pagewarden.core.faultlab.LabEngine;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import java.util.Optional;

/**
 * The incident-replay lab as this platform runs it. The lab is a jar of its own, installed deliberately
 * ({@code -Dloader.path=PATH/pagewarden-lab.jar}); with {@code pagewarden.lab.enabled=true} it must be there
 * (the platform refuses to start otherwise) and gives the engine its fault hooks. With the lab off nothing
 * of it is loaded, even when it is installed.
 */
@Component
public class LabMode {
    private static final Logger LOG = LoggerFactory.getLogger(LabMode.class);
    static final String NOT_INSTALLED = "pagewarden.lab.enabled=true, but the incident-replay lab is not installed: "
            + "start the platform with the lab's jar, java -Dloader.path=PATH/pagewarden-lab.jar -jar "
            + "pagewarden-platform.jar (see docs/incident-replay.md), or without pagewarden.lab.enabled";

    private final boolean installed;
    /** Null when the lab is off. */
    private final FaultLab lab;
    /** The engine's faults; null when the lab is off. */
    private final LabEngine engine;

    @Autowired
    public LabMode(PagewardenProperties properties) {
        this(properties.lab(), LabMode.class.getClassLoader());
    }

    /** The lab of {@code settings}, looked for on {@code loader}'s class path. */
    LabMode(PagewardenProperties.Lab settings, ClassLoader loader) {
        this.installed = FaultLab.installed(loader);
        if (!settings.enabled()) {
            this.lab = null;
            this.engine = null;
            return;
        }
        this.lab = FaultLab.load(loader).orElseThrow(() -> new IllegalStateException(NOT_INSTALLED));
        try {
            this.engine = lab.engine(settings.faults());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("pagewarden.lab.faults: " + e.getMessage(), e);
        }
        LOG.warn("LAB MODE: fault switches {} are ON - this engine deliberately re-opens isolation faults; "
                + "never serve tenants from it", settings.faults());
    }

    public boolean enabled() {
        return lab != null;
    }

    /** Whether the lab's jar is on the class path (whether or not the lab is on). */
    public boolean installed() {
        return installed;
    }

    /** The lab, when it is on. */
    public Optional<FaultLab> lab() {
        return Optional.ofNullable(lab);
    }

    /** The engine's faults and their oracle, when the lab is on. */
    public Optional<LabEngine> engine() {
        return Optional.ofNullable(engine);
    }
}
