package dev.pagewarden.incident.incident;

import java.time.Instant;
import java.util.List;

/**
 * A published disclosure's affected set as the lineage gave it at publication, stored and signed.
 *
 * @param canonical   the signed text (see {@code docs/evidence.md}); {@code digest} is its SHA-256
 * @param signatureOk whether the digest matches the text and the signature verifies with the registered key
 * @param readers     requests that read other tenants' KV data (counterparts: the writers)
 * @param exposed     requests whose KV data other tenants' requests read (counterparts: the readers)
 * @param drifts      later recomputations that came out different, oldest first
 */
public record FrozenBlastRadius(long disclosureId, long incidentId, Instant windowFrom, Instant windowTo, String model, String node,
                                String worker, Instant frozenAt, String canonical, String digestHex, String keyId,
                                boolean signatureOk, List<Row> readers, List<Row> exposed, List<Drift> drifts) {

    /** One affected request: its tenant, status (readers), and the requests on the other side. */
    public record Row(long request, String tenant, String status, List<Long> counterparts, List<String> counterpartTenants) {
    }

    /** A recomputation that differed: when, by which node, and what differed. */
    public record Drift(Instant seenAt, String seenBy, String details) {
    }
}
