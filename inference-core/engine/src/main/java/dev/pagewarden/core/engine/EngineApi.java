package dev.pagewarden.core.engine;

/**
 * The engine's public API: the packages an embedding application (the platform, the admin UI, the
 * audit store, the lab and the command line) may use. Everything else under {@code dev.pagewarden.core}
 * - the KV pool, the backends, the step guard, the workers, the transport, admission, the kernels - is
 * internal and may change without notice; architecture tests hold the embedding modules to this list.
 */
public final class EngineApi {

    /** ArchUnit package patterns of the public API. */
    public static final String[] PACKAGES = {
            "dev.pagewarden.core.engine..",    // Engine, its builder and config, pool snapshots
            "dev.pagewarden.core.request..",   // what a request is and how it ends
            "dev.pagewarden.core.sampling..",  // sampling parameters
            "dev.pagewarden.core.spi..",       // clock and metrics an application plugs in
            "dev.pagewarden.core.lineage..",   // lineage events and their sink
            "dev.pagewarden.core.safety..",    // safety events and their listener
            "dev.pagewarden.core.receipt..",   // isolation receipts: keys, signing, verification
            "dev.pagewarden.core.model..",     // model files: loading, formats, configuration
            "dev.pagewarden.core.tokenizer..", // text to tokens and back
            "dev.pagewarden.core.template..",  // chat templates: conversations to prompts
            "dev.pagewarden.core.download..",  // fetching models
            "dev.pagewarden.core.fault..",     // fault hooks (implemented by the replay lab)
            "dev.pagewarden.core.faultlab..",  // how an application finds and drives an installed replay lab
            "dev.pagewarden.core.cluster..",   // engine nodes (prefill, decode) and ClusterEngine, the platform's client of them
    };

    private EngineApi() {
    }
}
