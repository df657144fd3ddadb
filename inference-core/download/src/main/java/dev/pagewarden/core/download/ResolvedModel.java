package dev.pagewarden.core.download;

import java.nio.file.Path;
import java.util.List;

/**
 * A model present on disk and checked.
 *
 * @param name      the registry name, or for a Hugging Face reference the model id (file name without
 *                  extension, or repository name)
 * @param model     the model file, or the folder of a whole Hugging Face repository
 * @param tokenizer the separate tokenizer file of a llama2.c checkpoint; null when the model carries its own
 * @param files     how each file (model first) was obtained and verified
 */
public record ResolvedModel(String name, Path model, Path tokenizer, List<FileStatus> files) {
    public ResolvedModel {
        files = List.copyOf(files);
    }

    /** How a file's content was checked. */
    public enum Verification {
        /** Its SHA-256 equals the one pinned in the registry. */
        PINNED,
        /** Downloaded now; its SHA-256 equals the one the server reported (X-Linked-Etag, or the Hub's ETag). */
        SERVER,
        /** Its SHA-256 (LFS files) or git blob SHA-1 (small files) equals the one the Hub lists for the revision. */
        LISTED,
        /** Already on disk; its SHA-256 equals the one recorded (in {@code FILE.sha256}) when it was downloaded. */
        RECORDED,
        /** Not verified: no hash was known and the caller allowed that explicitly. */
        NONE
    }

    /** One file: where it is, its SHA-256 (always computed), how that was checked, whether it was fetched now. */
    public record FileStatus(Path path, String sha256, Verification verification, boolean downloaded) {
    }
}
