package dev.pagewarden.core.backend;

import dev.pagewarden.core.model.load.LoadedModel;

/** Discovered with {@link java.util.ServiceLoader}: the CPU backend lives here, a GPU one in module cuda-kernels. */
public interface BackendProvider {

    /** "cpu", "gpu". */
    String name();

    /** Whether this backend can run on this machine now; the reason is in {@link #unavailableReason()}. */
    boolean available();

    String unavailableReason();

    /** Higher wins for {@code --backend auto}. */
    int priority();

    /**
     * Why this backend cannot run {@code model} (an architecture or weight type its kernels lack), or
     * null when it can. {@code auto} passes over a backend that refuses; asking for it by name fails
     * with this reason before anything is allocated.
     */
    default String refusal(LoadedModel model) {
        return null;
    }

    Backend create(LoadedModel model, BackendOptions options);
}
