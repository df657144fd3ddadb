package dev.pagewarden.core.engine;

import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.request.ValidRequest;

import java.util.List;

/**
 * What an application serves requests with: one {@link Engine} in this process, or a cluster of engine
 * nodes reached over the network ({@code dev.pagewarden.core.cluster.ClusterEngine}). Both complete a
 * request's result the same way: the same exception types and error codes.
 */
public interface InferenceEngine extends AutoCloseable {

    /**
     * Submits a request this engine checked ({@link #validate}). A request that does not fit completes its result
     * with a rejection before any page is reserved.
     */
    RequestHandle submit(ValidRequest request, TokenListener listener);

    /**
     * Checks and submits a request. Invalid input throws {@link dev.pagewarden.core.request.InvalidRequestException}
     * at once; a request that does not fit completes its result with a rejection before any page is reserved.
     */
    default RequestHandle submit(GenerationRequest request, TokenListener listener) {
        return submit(validate(request), listener);
    }

    /**
     * Checks a request's values against this engine without submitting it; throws {@link
     * dev.pagewarden.core.request.InvalidRequestException}. A caller that charges quota first submits what it returns.
     */
    ValidRequest validate(GenerationRequest request);

    /** The effective context window: what is accepted for prompt + max new tokens. */
    int contextWindow();

    ModelConfig model();

    /** The model's id (its file name), as receipts name it. */
    String modelId();

    String backendName();

    /** Requests waiting for decode pages. */
    int queued();

    /** The prefill pool's state now (a snapshot). */
    PoolStats prefillPool();

    /** The decode pool's state now (a snapshot). */
    PoolStats decodePool();

    /** Every pool, prefill first (snapshots). */
    List<PoolStats> pools();

    @Override
    void close();
}
