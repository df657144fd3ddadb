package dev.pagewarden.core.download;

import java.nio.file.Path;
import java.util.List;

/**
 * A named model present on disk and checked.
 *
 * @param files how each file (model first, then tokenizer) was obtained and verified
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
        /** Already on disk; its SHA-256 equals the one recorded (in {@code FILE.sha256}) when it was downloaded. */
        RECORDED,
        /** Not verified: no hash was known and the caller allowed that explicitly. */
        NONE
    }

    /** One file: where it is, its SHA-256 (always computed), how that was checked, whether it was fetched now. */
    public record FileStatus(Path path, String sha256, Verification verification, boolean downloaded) {
    }
}
