package dev.pagewarden.core.kv;

import dev.pagewarden.core.safety.SafetyEvent;

/**
 * The verdict on one sequence's reads in one step.
 *
 * @param violation        the detector that refused the read, or null when the read may go ahead
 * @param page             the offending page (-1 when none)
 * @param epoch            the epoch the page table expected for it
 * @param details          expected vs found
 * @param crossTenantSlots ground truth, only counted in lab mode: slots about to be read whose data
 *                         another tenant's request wrote last (whether or not a detector noticed)
 */
public record ReadCheck(SafetyEvent.Type violation, int page, long epoch, String details, int crossTenantSlots) {

    public static final ReadCheck CLEAN = new ReadCheck(null, -1, 0, "", 0);

    public boolean allowed() {
        return violation == null;
    }
}
