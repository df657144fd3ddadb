package dev.pagewarden.core.faultlab;

import dev.pagewarden.core.engine.InferenceEngine;

import java.util.Map;
import java.util.function.Function;

/**
 * Where a replay's traffic goes.
 *
 * @param engine    the running engine, built with the lab engine's hooks
 * @param encode    a client's text to prompt tokens, as the application encodes it
 * @param tenantIds the application's tenant id for each of the lab's tenants ({@link FaultLab#tenants()})
 */
public record ReplayTarget(InferenceEngine engine, Function<String, int[]> encode, Map<String, String> tenantIds) {

    public ReplayTarget {
        tenantIds = Map.copyOf(tenantIds);
    }
}
