package dev.pagewarden.platform.audit;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** One tenant request as the platform saw it end: counts, outcome, timings and its receipt. */
@Entity
@Table(name = "requests")
public class RequestRecord {
    @Id
    private Long id;
    @Column(name = "public_id")
    private String publicId;
    @Column(name = "public_prefix")
    private String publicPrefix;
    @Column(name = "tenant_id", nullable = false)
    private String tenantId;
    @Column(nullable = false)
    private String model;
    @Column(name = "prompt_tokens", nullable = false)
    private int promptTokens;
    @Column(name = "generated_tokens", nullable = false)
    private int generatedTokens;
    @Column(nullable = false)
    private String status;
    @Column(name = "error_code")
    private String errorCode;
    @Column(name = "received_at", nullable = false)
    private Instant receivedAt;
    @Column(name = "admitted_at")
    private Instant admittedAt;
    @Column(name = "first_token_at")
    private Instant firstTokenAt;
    @Column(name = "finished_at")
    private Instant finishedAt;
    @Column(name = "receipt_hash")
    private byte[] receiptHash;
    @Column(name = "finish_reason")
    private String finishReason;
    @Column(nullable = false)
    private boolean stream;
    private String receipt;

    protected RequestRecord() {
    }

    public RequestRecord(long id, String publicId, String publicPrefix, String tenantId, String model, int promptTokens, int generatedTokens, String status,
                         String errorCode, Instant receivedAt, Instant admittedAt, Instant firstTokenAt,
                         Instant finishedAt, byte[] receiptHash, String finishReason, boolean stream, String receipt) {
        this.id = id;
        this.publicId = publicId;
        this.publicPrefix = publicPrefix;
        this.tenantId = tenantId;
        this.model = model;
        this.promptTokens = promptTokens;
        this.generatedTokens = generatedTokens;
        this.status = status;
        this.errorCode = errorCode;
        this.receivedAt = receivedAt;
        this.admittedAt = admittedAt;
        this.firstTokenAt = firstTokenAt;
        this.finishedAt = finishedAt;
        this.receiptHash = receiptHash;
        this.finishReason = finishReason;
        this.stream = stream;
        this.receipt = receipt;
    }

    public long id() {
        return id;
    }

    /** The id the tenant was given, without its prefix; null for old rows and lab replays. */
    public String publicId() {
        return publicId;
    }

    /** The prefix the tenant saw before {@link #publicId()} ({@code cmpl-}, {@code chatcmpl-}); null where unknown. */
    public String publicPrefix() {
        return publicPrefix;
    }

    public String tenantId() {
        return tenantId;
    }

    public String model() {
        return model;
    }

    public int promptTokens() {
        return promptTokens;
    }

    public int generatedTokens() {
        return generatedTokens;
    }

    public String status() {
        return status;
    }

    public String errorCode() {
        return errorCode;
    }

    public Instant receivedAt() {
        return receivedAt;
    }

    public Instant finishedAt() {
        return finishedAt;
    }

    public String finishReason() {
        return finishReason;
    }

    public boolean stream() {
        return stream;
    }

    public String receipt() {
        return receipt;
    }
}
