package dev.pagewarden.core.download;

import java.net.URI;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One file of a model: where it comes from and, when we know them, its size and hashes.
 *
 * @param fileName    name it gets on disk (inside the model's folder)
 * @param source      Hugging Face repository file (the endpoint is configurable, so mirrors work) or a plain URL
 * @param sha256      expected SHA-256 (64 lowercase hex digits), or null when not known
 * @param gitBlobSha1 expected git blob SHA-1 (40 lowercase hex digits: SHA-1 of {@code "blob <size>\0"} and the
 *                    bytes), which is what the Hub lists for small files kept in git rather than LFS; or null
 * @param size        expected size in bytes, or -1 when not known
 * @param listed      the expectations come from the Hub's file listing of a revision, not from this project
 */
public record RemoteFile(String fileName, Source source, String sha256, String gitBlobSha1, long size, boolean listed) {
    static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    static final Pattern SHA1 = Pattern.compile("[0-9a-f]{40}");

    /** A file of the project's registry: at most a pinned SHA-256. */
    public RemoteFile(String fileName, Source source, String sha256) {
        this(fileName, source, sha256, null, -1, false);
    }

    public RemoteFile {
        Objects.requireNonNull(fileName, "fileName");
        Objects.requireNonNull(source, "source");
        if (fileName.isEmpty() || fileName.contains("/") || fileName.contains("\\") || fileName.startsWith(".")) {
            throw new IllegalArgumentException("bad file name '" + fileName + "'");
        }
        if (sha256 != null) {
            sha256 = sha256.toLowerCase(Locale.ROOT);
            if (!SHA256.matcher(sha256).matches()) {
                throw new IllegalArgumentException("pinned SHA-256 of " + fileName + " is not 64 hex digits: " + sha256);
            }
        }
        if (gitBlobSha1 != null) {
            gitBlobSha1 = gitBlobSha1.toLowerCase(Locale.ROOT);
            if (!SHA1.matcher(gitBlobSha1).matches()) {
                throw new IllegalArgumentException("git blob SHA-1 of " + fileName + " is not 40 hex digits: " + gitBlobSha1);
            }
        }
        if (size < -1) {
            throw new IllegalArgumentException("size of " + fileName + " is negative: " + size);
        }
    }

    /** Where the expected hashes come from, for messages. */
    String hashOrigin() {
        return listed ? "listed by the Hub" + (source instanceof HuggingFace h ? " for " + h.repo() + "@" + h.revision() : "")
                : "pinned in the registry";
    }

    /** Where a file is fetched from. */
    public sealed interface Source {
        /** The URL under the given Hugging Face endpoint (ignored by {@link Url}). */
        URI uri(URI hfEndpoint);
    }

    /** {@code {endpoint}/{repo}/resolve/{revision}/{path}}; the Hub reports the SHA-256 of LFS files. */
    public record HuggingFace(String repo, String revision, String path) implements Source {
        @Override
        public URI uri(URI hfEndpoint) {
            String base = hfEndpoint.toString();
            if (base.endsWith("/")) {
                base = base.substring(0, base.length() - 1);
            }
            return URI.create(base + "/" + repo + "/resolve/" + revision + "/" + path);
        }
    }

    /** A fixed URL; its server's ETag is not trusted as a content hash, so only a pinned SHA-256 verifies it. */
    public record Url(URI url) implements Source {
        @Override
        public URI uri(URI hfEndpoint) {
            return url;
        }
    }
}
