package dev.pagewarden.core.download;

import java.util.List;
import java.util.Objects;

/** A named model the downloader knows: a llama2.c checkpoint and its tokenizer. */
public record ModelSpec(String name, String description, RemoteFile model, RemoteFile tokenizer) {
    public ModelSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(tokenizer, "tokenizer");
        if (!name.matches("[A-Za-z0-9._-]+") || name.startsWith(".")) {
            throw new IllegalArgumentException("bad model name '" + name + "'");
        }
    }

    public List<RemoteFile> files() {
        return List.of(model, tokenizer);
    }
}
