package dev.pagewarden.platform.engine;

import dev.pagewarden.core.download.HubReference;
import dev.pagewarden.platform.config.PagewardenProperties;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the served model comes from, decided from configuration before anything is loaded. */
sealed interface ModelSource {

    /** A model file on disk (and a tokenizer file for llama2.c checkpoints), or a Hugging Face model folder. */
    record Local(Path model, Path tokenizer, String id) implements ModelSource {
    }

    /** A named model fetched into the platform's model folder on first start. */
    record Named(String name, String id) implements ModelSource {
    }

    /** Nothing configured: the platform starts and explains how to add a model. */
    record None() implements ModelSource {
    }

    static ModelSource of(PagewardenProperties.Model m) {
        if (m.path() != null) {
            if (!Files.isRegularFile(m.path()) && !Files.isDirectory(m.path())) {
                throw new IllegalStateException("pagewarden.model.path (PAGEWARDEN_MODEL_PATH) = " + m.path()
                        + " is not a readable file or folder");
            }
            if (m.tokenizer() != null && !Files.isRegularFile(m.tokenizer())) {
                throw new IllegalStateException("pagewarden.model.tokenizer (PAGEWARDEN_MODEL_TOKENIZER) = "
                        + m.tokenizer() + " is not a readable file");
            }
            return new Local(m.path(), m.tokenizer(), checkedId(idOf(m.id(), m.path())));
        }
        if (m.name() != null && !m.name().isBlank()) {
            return new Named(m.name(), checkedId(m.id() == null || m.id().isBlank() ? defaultId(m.name()) : m.id()));
        }
        return new None();
    }

    /** A registry name is its own id; a Hugging Face reference's is its file's name without extension, or its repository's name. */
    private static String defaultId(String name) {
        if (!HubReference.looksLike(name)) {
            return name;
        }
        try {
            return HubReference.parse(name).id();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("pagewarden.model.name (PAGEWARDEN_MODEL_NAME): " + e.getMessage(), e);
        }
    }

    /** Refuses to start with an id clients could not send back (or one that would garble logs). */
    private static String checkedId(String id) {
        if (!ModelIds.valid(id)) {
            throw new IllegalStateException("pagewarden.model.id (PAGEWARDEN_MODEL_ID): '" + id.replaceAll("\\p{Cntrl}", "?")
                    + "' is not a valid model id: " + ModelIds.problem()
                    + " (set pagewarden.model.id when the file name does not qualify)");
        }
        return id;
    }

    /** The API id: configured, else the file name without its extension, or the folder's whole name (Qwen3-0.6B). */
    static String idOf(String configured, Path file) {
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        String name = file.getFileName().toString();
        if (Files.isDirectory(file)) {
            return name;
        }
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}
