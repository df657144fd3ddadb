package dev.pagewarden.core.engine;

/**
 * The engine's public API: the packages an embedding application (the platform, the admin UI, the incident
 * domain, the audit store) may use. Everything else in the engine - the KV pool, the backends, the step guard,
 * the workers, admission, the kernels, model formats - is internal and may change without notice; architecture
 * tests hold the embedding modules to this list. The transport ({@code core.cluster}: {@code ClusterEngine}) and
 * the downloader ({@code core.download}) are modules of their own, named by the modules that use them.
 */
public final class EngineApi {

    /** ArchUnit package patterns of the public API. */
    public static final String[] PACKAGES = {
            "dev.pagewarden.core.engine..",    // Engine, its builder and config, pool snapshots
            "dev.pagewarden.core.request..",   // what a request is and how it ends
            "dev.pagewarden.core.sampling..",  // sampling parameters
            "dev.pagewarden.core.grammar..",   // response formats: JSON schemas compiled to token masks
            "dev.pagewarden.core.spi..",       // clock and metrics an application plugs in
            "dev.pagewarden.core.lineage..",   // lineage events and their sink
            "dev.pagewarden.core.safety..",    // safety events and their listener
            "dev.pagewarden.core.receipt..",   // isolation receipts: keys, signing, verification
            "dev.pagewarden.core.model.load..", // opening a model (any format) for an engine
            "dev.pagewarden.core.tokenizer..", // text to tokens and back
            "dev.pagewarden.core.template..",  // chat templates: conversations to prompts
            "dev.pagewarden.core.tools..",     // tool calls: prompts, forced-call grammars, reading calls back
            "dev.pagewarden.core.fault..",     // fault hooks, which an installed lab supplies
            "dev.pagewarden.core.faultlab..",  // finding and driving an installed replay lab
    };

    private EngineApi() {
    }
}
