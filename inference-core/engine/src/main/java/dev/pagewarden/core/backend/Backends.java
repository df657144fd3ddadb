package dev.pagewarden.core.backend;

import dev.pagewarden.core.model.load.LoadedModel;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** Finds backends with {@link ServiceLoader} and picks one by name, or the best available for "auto". */
public final class Backends {
    private static final System.Logger LOG = System.getLogger(Backends.class.getName());

    private Backends() {
    }

    private static String refusal(BackendProvider p, LoadedModel model) {
        String why = p.refusal(model);
        return why == null ? null : "refuses the model: " + why;
    }

    public static List<BackendProvider> all() {
        List<BackendProvider> list = new ArrayList<>();
        ServiceLoader.load(BackendProvider.class).forEach(list::add);
        list.sort(Comparator.comparingInt(BackendProvider::priority).reversed());
        return list;
    }

    /** The provider for {@code name} ("cpu", "gpu", "auto"); a clear error when it is unknown or cannot run here. */
    public static BackendProvider select(String name) {
        return select(name, null);
    }

    /**
     * The provider for {@code name} that can run {@code model} (null: any model). {@code auto} takes the
     * best-ranked backend that is available and does not refuse the model, and logs why it passed over
     * the better-ranked ones; a backend named explicitly that cannot run here, or refuses the model,
     * fails with the reason.
     */
    public static BackendProvider select(String name, LoadedModel model) {
        return select(all(), name, model);
    }

    /** {@link #select(String, LoadedModel)} among {@code providers}, best-ranked first. */
    static BackendProvider select(List<BackendProvider> providers, String name, LoadedModel model) {
        if ("auto".equals(name)) {
            // say which, and why not the better-ranked ones (a missing GPU should never be a silent surprise)
            StringBuilder passed = new StringBuilder();
            for (BackendProvider p : providers) {
                String why = !p.available() ? "unavailable: " + p.unavailableReason()
                        : model == null ? null : refusal(p, model);
                if (why == null) {
                    LOG.log(System.Logger.Level.INFO, "backend auto: using {0}{1}", p.name(), passed);
                    return p;
                }
                passed.append("; ").append(p.name()).append(' ').append(why);
            }
            throw new IllegalStateException("no backend can run this model here" + passed);
        }
        for (BackendProvider p : providers) {
            if (p.name().equals(name)) {
                if (!p.available()) {
                    throw new IllegalStateException("backend '" + name + "' is not available here: " + p.unavailableReason());
                }
                String why = model == null ? null : p.refusal(model);
                if (why != null) {
                    throw new IllegalArgumentException("backend '" + name + "' cannot run this model: " + why);
                }
                return p;
            }
        }
        throw new IllegalArgumentException("unknown backend '" + name + "'; known: "
                + providers.stream().map(BackendProvider::name).toList() + " and auto");
    }
}
