package dev.pagewarden.lab;

import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.faultlab.FaultLab;
import dev.pagewarden.core.faultlab.LabEngine;
import dev.pagewarden.core.faultlab.Replay;
import dev.pagewarden.core.faultlab.ReplayTarget;

import java.util.List;

/**
 * The lab as an application finds it ({@code META-INF/services/dev.pagewarden.core.faultlab.FaultLab}):
 * its scenarios, and for a lab-mode engine its fault hooks with an isolation oracle and replays through it.
 */
public final class InstalledLab implements FaultLab {

    /** For {@link java.util.ServiceLoader}. */
    public InstalledLab() {
    }

    @Override
    public List<String> scenarios() {
        return ReplayLab.scenarios().stream().map(ReplayLab.Scenario::name).toList();
    }

    @Override
    public List<String> scenarioFaults(String scenario) {
        return ReplayLab.scenario(scenario).faults().labels();
    }

    @Override
    public List<String> tenants() {
        return List.copyOf(LabWorkload.TENANTS.keySet());
    }

    @Override
    public LabEngine engine(List<String> labels) {
        LabHooks hooks = LabFaults.parse(labels).hooks(new IsolationOracle());
        EngineReplay replay = new EngineReplay(hooks.oracle());
        return new LabEngine() {
            @Override
            public List<String> faults() {
                return hooks.faults().labels();
            }

            @Override
            public FaultHooks hooks() {
                return hooks;
            }

            @Override
            public Replay replay(String scenario, ReplayTarget target) throws InterruptedException {
                return replay.run(ReplayLab.scenario(scenario), target);
            }
        };
    }
}
