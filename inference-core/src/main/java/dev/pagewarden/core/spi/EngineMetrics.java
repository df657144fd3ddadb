package dev.pagewarden.core.spi;

/** Engine measurements; the platform binds this to Micrometer. Called on engine threads: keep it cheap. */
public interface EngineMetrics {

    /** One decode step ran {@code batchSize} sequences in {@code nanos}. */
    default void decodeStep(int batchSize, long nanos) {
    }

    /** One prefill chunk of {@code tokens} tokens ran in {@code nanos}. */
    default void prefillChunk(int tokens, long nanos) {
    }

    /** A transfer of {@code pages} pages finished, accepted or not. */
    default void transfer(int pages, boolean accepted) {
    }

    EngineMetrics NONE = new EngineMetrics() {
    };
}
