package dev.pagewarden.platform.engine;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.springframework.stereotype.Component;

import java.nio.file.Path;

/** Turns the configured model source into files on disk: as given, or downloaded into the model folder. */
@Component
class ModelResolver {
    private final PagewardenProperties properties;

    ModelResolver(PagewardenProperties properties) {
        this.properties = properties;
    }

    record Resolved(String id, Path model, Path tokenizer) {
    }

    /** Null when no model is configured. */
    Resolved resolve(ModelSource source) {
        return switch (source) {
            case ModelSource.Local l -> new Resolved(l.id(), l.model(), l.tokenizer());
            case ModelSource.Named n -> throw new IllegalStateException("pagewarden.model.name=" + n.name()
                    + ": named models are not supported yet; download the files and set pagewarden.model.path");
            case ModelSource.None none -> null;
        };
    }
}
