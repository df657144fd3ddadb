package dev.pagewarden.core.backend;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** Finds backends with {@link ServiceLoader} and picks one by name, or the best available for "auto". */
public final class Backends {
    private static final System.Logger LOG = System.getLogger(Backends.class.getName());

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
            BackendProvider chosen = providers.stream().filter(BackendProvider::available).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no backend is available"));
            // say which, and why not the better-ranked ones (a missing GPU should never be a silent surprise)
            StringBuilder passed = new StringBuilder();
            for (BackendProvider p : providers) {
                if (p == chosen) {
                    break;
                }
                passed.append("; ").append(p.name()).append(" unavailable: ").append(p.unavailableReason());
            }
            LOG.log(System.Logger.Level.INFO, "backend auto: using {0}{1}", chosen.name(), passed);
            return chosen;
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
