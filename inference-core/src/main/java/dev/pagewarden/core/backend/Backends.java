package dev.pagewarden.core.backend;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** Finds backends with {@link ServiceLoader} and picks one by name, or the best available for "auto". */
public final class Backends {
    private Backends() {
    }

    public static List<BackendProvider> all() {
        List<BackendProvider> list = new ArrayList<>();
        ServiceLoader.load(BackendProvider.class).forEach(list::add);
        list.sort(Comparator.comparingInt(BackendProvider::priority).reversed());
        return list;
    }

    /** The provider for {@code name} ("cpu", "gpu", "auto"); a clear error when it is unknown or cannot run here. */
    public static BackendProvider select(String name) {
        List<BackendProvider> providers = all();
        if ("auto".equals(name)) {
            return providers.stream().filter(BackendProvider::available).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no backend is available"));
        }
        for (BackendProvider p : providers) {
            if (p.name().equals(name)) {
                if (!p.available()) {
                    throw new IllegalStateException("backend '" + name + "' is not available here: " + p.unavailableReason());
                }
                return p;
            }
        }
        throw new IllegalArgumentException("unknown backend '" + name + "'; known: "
                + providers.stream().map(BackendProvider::name).toList() + " and auto");
    }
}
