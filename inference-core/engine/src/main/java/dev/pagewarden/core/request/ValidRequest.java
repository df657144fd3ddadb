package dev.pagewarden.core.request;

/**
 * A request an engine has checked ({@code InferenceEngine.validate}): what its submit takes, so that a caller who
 * checks before charging quota does not have the same check run again. Only the engine that made it takes it
 * unchecked; any other checks it again.
 */
public interface ValidRequest {
    GenerationRequest request();
}
