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

    Backend create(LoadedModel model, BackendOptions options);
}
