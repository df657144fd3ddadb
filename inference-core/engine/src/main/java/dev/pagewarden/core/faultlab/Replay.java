package dev.pagewarden.core.faultlab;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A finished replay.
 *
 * @param requests every request it sent, in submission order
 * @param truth    the lab's ground truth (its isolation oracle's count), for comparison with what the
 *                 detectors and the lineage report; in the lab's order
 */
public record Replay(List<Sent> requests, Map<String, Object> truth) {

    public Replay {
        requests = List.copyOf(requests);
        truth = Collections.unmodifiableMap(new LinkedHashMap<>(truth));
    }

    public enum Outcome { SERVED, REJECTED, ABORTED, FAILED }

    /**
     * One request of the replay.
     *
     * @param tenantId        the application's tenant id it was sent under
     * @param generatedTokens tokens delivered (0 unless served)
     */
    public record Sent(long id, String tenantId, int promptTokens, int generatedTokens, Outcome outcome,
                       Instant received, Instant finished) {
    }
}
