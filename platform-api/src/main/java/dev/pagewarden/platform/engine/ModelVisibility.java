package dev.pagewarden.platform.engine;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** The operator's switch for one model: private models answer 503 model_unavailable. */
@Entity
@Table(name = "model_visibility")
public class ModelVisibility {
    @Id
    @Column(name = "model_id")
    private String modelId;
    @Column(name = "private", nullable = false)
    private boolean privateModel;
    @Column(name = "changed_at", nullable = false)
    private Instant changedAt;
    @Column(name = "changed_by", nullable = false)
    private String changedBy;

    protected ModelVisibility() {
    }

    ModelVisibility(String modelId, boolean privateModel, Instant changedAt, String changedBy) {
        this.modelId = modelId;
        this.privateModel = privateModel;
        this.changedAt = changedAt;
        this.changedBy = changedBy;
    }

    public String modelId() {
        return modelId;
    }

    public boolean isPrivate() {
        return privateModel;
    }

    public Instant changedAt() {
        return changedAt;
    }

    public String changedBy() {
        return changedBy;
    }
}
