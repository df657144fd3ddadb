package dev.pagewarden.platform.engine;

import java.time.Instant;

/** The operator's switch for one model as stored: private models answer 503 model_unavailable. */
public record ModelVisibility(String modelId, boolean isPrivate, Instant changedAt, String changedBy) {
}
