package dev.pagewarden.core.download;

import java.net.URI;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One file of a named model: where it comes from and, when we know it, its SHA-256.
 *
 * @param fileName name it gets on disk (inside the model's folder)
 * @param source   Hugging Face repository file (the endpoint is configurable, so mirrors work) or a plain URL
 * @param sha256   pinned SHA-256 (64 lowercase hex digits), or null when not known to the project
 */
public record RemoteFile(String fileName, Source source, String sha256) {
    static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

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
