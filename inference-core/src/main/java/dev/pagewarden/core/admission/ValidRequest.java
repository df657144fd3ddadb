package dev.pagewarden.core.admission;

import dev.pagewarden.core.request.GenerationRequest;

/**
 * A request an engine's admission has checked ({@link Admission#validate}): what its submit takes, so that a caller
 * who checks before charging quota does not have the same check run again.
 */
public final class ValidRequest {
    private final GenerationRequest request;
    private final Admission checkedBy;

    ValidRequest(GenerationRequest request, Admission checkedBy) {
        this.request = request;
        this.checkedBy = checkedBy;
    }

    public GenerationRequest request() {
        return request;
    }

    Admission checkedBy() {
        return checkedBy;
    }
}
