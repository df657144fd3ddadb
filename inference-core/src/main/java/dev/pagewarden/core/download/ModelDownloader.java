package dev.pagewarden.core.download;

import dev.pagewarden.core.download.ResolvedModel.FileStatus;
import dev.pagewarden.core.download.ResolvedModel.Verification;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fetches named models (see {@link ModelRegistry}) into a local folder, verified.
 *
 * <p>Each file goes to {@code DIR/NAME/FILE}: streamed into {@code FILE.part} (resumed with an HTTP
 * Range request when a previous attempt was cut and the server supports ranges), SHA-256 computed
 * while streaming, then renamed into place atomically; {@code FILE.sha256} records the hash so a
 * later start checks the file without any network. The expected hash is the one pinned in the
 * registry, else the one the Hugging Face server reports ({@code X-Linked-Etag}, which the Hub sets
 * to the SHA-256 of LFS files, or a 64-hex-digit {@code ETag} from the Hub's own host; a CDN's ETag
 * is never trusted). With neither, the download is refused unless unverified downloads were allowed
 * explicitly. A server-reported hash proves the bytes arrived intact and complete (no truncation, no
 * badly spliced resume); it does not prove the server is honest - only a pinned hash does.
 */
public final class ModelDownloader {
    /** Environment variable overriding the Hugging Face endpoint (a mirror, or a test server); {@code HF_ENDPOINT} is honoured too. */
    public static final String ENDPOINT_ENV = "PAGEWARDEN_HF_ENDPOINT";
    public static final URI DEFAULT_ENDPOINT = URI.create("https://huggingface.co");
    private static final int MAX_REDIRECTS = 10;
    private static final int BUFFER = 1 << 16;
    private static final Pattern CONTENT_RANGE = Pattern.compile("bytes (\\d+)-(\\d+)/(\\d+|\\*)");

    private final ModelRegistry registry;
    private final URI endpoint;
    private final String token;
    private final boolean allowUnverified;
    private final int maxAttempts;
    private final Duration retryBackoff;
    private final HttpClient http;
    private final Duration headerTimeout;

    private ModelDownloader(Builder b) {
        this.registry = b.registry;
        this.endpoint = b.endpoint;
        this.token = b.token;
        this.allowUnverified = b.allowUnverified;
        this.maxAttempts = b.maxAttempts;
        this.retryBackoff = b.retryBackoff;
        this.headerTimeout = b.timeout;
        // Redirects are followed by hand: the Hub answers 302 to a CDN, and the hash headers and the
        // decision whether to send the token depend on which hop we are at.
        this.http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(b.timeout).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Default settings with the endpoint from {@code PAGEWARDEN_HF_ENDPOINT}/{@code HF_ENDPOINT} and the token from {@code HF_TOKEN}. */
    public static ModelDownloader fromEnvironment() {
        return builder().environment(System.getenv()).build();
    }

    /** {@code ~/.pagewarden/models}. */
    public static Path defaultDirectory() {
        return Path.of(System.getProperty("user.home"), ".pagewarden", "models");
    }

    public ModelRegistry registry() {
        return registry;
    }

    public URI endpoint() {
        return endpoint;
    }

    /**
     * Makes sure the named model and its tokenizer are in {@code dir/name/}, verified, downloading
     * what is missing or damaged. Blocking; safe to call on every start (a present file is re-hashed
     * locally, no network is used for it).
     *
     * @throws IllegalArgumentException for an unknown name (the message lists the known ones)
     * @throws DownloadException        when a file cannot be fetched or verified; the message names the URL and the reason
     */
    public ResolvedModel ensure(String name, Path dir, ProgressListener listener) throws DownloadException, InterruptedException {
        ModelSpec spec = registry.get(name);
        Path folder = dir.resolve(spec.name());
        // Refuse before fetching anything when some file can never be verified: better than failing after 400 MB.
        if (!allowUnverified) {
            for (RemoteFile f : spec.files()) {
                if (f.sha256() == null && f.source() instanceof RemoteFile.Url u && !recordedHashPresent(folder.resolve(f.fileName()))) {
                    throw new DownloadException(spec.name() + ": " + f.fileName() + " (" + u.url() + ") has no pinned SHA-256 "
                            + "and its server reports none, so it cannot be verified; allow an unverified download "
                            + "explicitly (--insecure-no-checksum), or put a copy you checked at " + folder.resolve(f.fileName())
                            + " with its SHA-256 in " + f.fileName() + ".sha256 (sha256sum format)");
                }
            }
        }
        List<FileStatus> statuses = new ArrayList<>();
        for (RemoteFile f : spec.files()) {
            statuses.add(ensureFile(f, folder, listener));
        }
        return new ResolvedModel(spec.name(), statuses.get(0).path(), statuses.get(1).path(), statuses);
    }

    /** One file into {@code folder}: reuse it when its hash checks out, otherwise download it. */
    public FileStatus ensureFile(RemoteFile f, Path folder, ProgressListener listener) throws DownloadException, InterruptedException {
        Path target = folder.resolve(f.fileName());
        try {
            Files.createDirectories(folder);
            FileStatus present = checkPresent(f, target, listener);
            if (present != null) {
                return present;
            }
            return download(f, target, listener);
        } catch (DownloadException | InterruptedException e) {
            throw e;
        } catch (IOException e) {
            throw new DownloadException(f.fileName() + ": " + e.getMessage() + " (" + target + ")", e);
        }
    }

    private static boolean recordedHashPresent(Path target) {
        return Files.isRegularFile(target) && Files.isRegularFile(sidecar(target));
    }

    private static Path sidecar(Path target) {
        return target.resolveSibling(target.getFileName() + ".sha256");
    }

    private FileStatus checkPresent(RemoteFile f, Path target, ProgressListener listener) throws IOException {
        if (!Files.isRegularFile(target)) {
            return null;
        }
        String expected = f.sha256();
        Verification how = Verification.PINNED;
        if (expected == null) {
            expected = readSidecar(target);
            how = Verification.RECORDED;
        }
        if (expected == null) {
            listener.message(target.getFileName() + ": present but with no recorded SHA-256; downloading it again to verify");
            return null;
        }
        String actual = sha256Of(target);
        if (!actual.equals(expected)) {
            listener.message(target.getFileName() + ": present but its SHA-256 is " + actual + ", expected " + expected
                    + "; downloading it again");
            Files.delete(target);
            return null;
        }
        if (how == Verification.PINNED && readSidecar(target) == null) {
            writeSidecar(target, actual);
        }
        listener.message(target.getFileName() + ": present, SHA-256 verified");
        return new FileStatus(target, actual, how, false);
    }

    private FileStatus download(RemoteFile f, Path target, ProgressListener listener) throws IOException, InterruptedException {
        URI url = f.source().uri(endpoint);
        Path part = target.resolveSibling(target.getFileName() + ".part");
        Streamed done;
        try (FileChannel ch = FileChannel.open(part, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
             FileLock ignored = lock(ch, part)) {
            try {
                done = fetchWithRetries(f, url, ch, part, listener);
                ch.force(true);
            } catch (MismatchException e) {
                // Bytes that fail their hash are worthless; keep nothing that a later run could resume.
                deleteHeld(ch, part);
                throw new DownloadException(e.getMessage() + "; the download was deleted");
            } catch (IOException | RuntimeException e) {
                if (ch.size() == 0) {
                    deleteHeld(ch, part);
                }
                throw e;
            }
        }
        try {
            Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(part, target, StandardCopyOption.REPLACE_EXISTING);
        }
        writeSidecar(target, done.sha256);
        return new FileStatus(target, done.sha256, done.verification, true);
    }

    /** Deletes the part file while we still hold its lock (POSIX allows it); where that fails, empty is enough. */
    private static void deleteHeld(FileChannel ch, Path part) throws IOException {
        ch.truncate(0);
        try {
            Files.deleteIfExists(part);
        } catch (IOException e) {
            // an empty part file is harmless: the next run starts from byte 0
        }
    }

    private static FileLock lock(FileChannel ch, Path part) throws DownloadException {
        try {
            FileLock l = ch.tryLock();
            if (l == null) {
                throw new DownloadException(part + " is being downloaded by another process");
            }
            return l;
        } catch (OverlappingFileLockException e) {
            throw new DownloadException(part + " is being downloaded by another thread of this process");
        } catch (IOException e) {
            throw new DownloadException("cannot lock " + part + ": " + e.getMessage(), e);
        }
    }

    private record Streamed(String sha256, Verification verification) {
    }

    /** A failure worth another attempt (a cut connection, a 5xx); anything else is a {@link DownloadException}. */
    private static final class Retryable extends IOException {
        Retryable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private Streamed fetchWithRetries(RemoteFile f, URI url, FileChannel ch, Path part, ProgressListener listener)
            throws IOException, InterruptedException {
        boolean restartedClean = false;
        for (int attempt = 1; ; attempt++) {
            long have = ch.size();
            try {
                if (have > 0) {
                    listener.message(f.fileName() + ": resuming at " + have + " bytes");
                }
                return fetchOnce(f, url, ch, have, listener);
            } catch (MismatchException e) {
                // A resumed part may come from an older version of the file: one clean try before giving up.
                if (!e.resumed || restartedClean) {
                    throw e;
                }
                listener.message(f.fileName() + ": hash mismatch after resuming; starting over from byte 0");
                ch.truncate(0);
                restartedClean = true;
            } catch (Retryable e) {
                if (attempt >= maxAttempts) {
                    throw new DownloadException(f.fileName() + ": giving up after " + attempt + " attempts: " + e.getMessage()
                            + (ch.size() > 0 ? " (the partial file " + part + " is kept; the next run resumes it)" : ""), e);
                }
                listener.message(f.fileName() + ": attempt " + attempt + " failed (" + e.getMessage() + "); retrying");
                if (!retryBackoff.isZero()) {
                    Thread.sleep(retryBackoff.multipliedBy(attempt));
                }
            }
        }
    }

    private static final class MismatchException extends IOException {
        final boolean resumed;

        MismatchException(String message, boolean resumed) {
            super(message);
            this.resumed = resumed;
        }
    }

    /**
     * One HTTP exchange appending to {@code ch} from byte {@code have}; returns the verified result or
     * throws {@link MismatchException}, {@link Retryable} or {@link DownloadException}.
     */
    private Streamed fetchOnce(RemoteFile f, URI url, FileChannel ch, long have, ProgressListener listener)
            throws IOException, InterruptedException {
        Opened o = open(url, have, f.source() instanceof RemoteFile.HuggingFace);
        HttpResponse<InputStream> r = o.response;
        try (InputStream body = r.body()) {
            int status = r.statusCode();
            long start;
            long total;
            if (status == 200) {
                start = 0;
                total = r.headers().firstValueAsLong("Content-Length").orElse(-1);
            } else if (status == 206) {
                Matcher m = CONTENT_RANGE.matcher(r.headers().firstValue("Content-Range").orElse(""));
                if (!m.matches() || Long.parseLong(m.group(1)) != have) {
                    ch.truncate(0);
                    throw new Retryable("server answered the range request from byte " + have + " with Content-Range '"
                            + r.headers().firstValue("Content-Range").orElse("") + "'; starting over", null);
                }
                start = have;
                total = m.group(3).equals("*") ? -1 : Long.parseLong(m.group(3));
            } else if (status == 416) {
                // Our part is no prefix of the current file (or is already whole but unverified): start over.
                ch.truncate(0);
                throw new Retryable("HTTP 416 for a resume from byte " + have, null);
            } else {
                throw httpError(status, o.finalUri, url);
            }
            if (o.linkedSize >= 0 && total >= 0 && o.linkedSize != total) {
                throw new DownloadException(f.fileName() + ": the Hub reports " + o.linkedSize + " bytes (X-Linked-Size) but "
                        + o.finalUri + " serves " + total);
            }
            String expected = f.sha256();
            Verification how = Verification.PINNED;
            if (expected != null && o.serverSha256 != null && !expected.equals(o.serverSha256)) {
                throw new DownloadException(f.fileName() + ": " + url + " reports SHA-256 " + o.serverSha256
                        + " but the registry pins " + expected + " (the upstream file changed?); refusing to download");
            }
            if (expected == null) {
                expected = o.serverSha256;
                how = Verification.SERVER;
            }
            if (expected == null) {
                if (!allowUnverified) {
                    throw new DownloadException(f.fileName() + ": " + url + " has no pinned SHA-256 and the server sent none "
                            + "(no X-Linked-Etag, no SHA-256 ETag), so it cannot be verified; allow an unverified download "
                            + "explicitly (--insecure-no-checksum)");
                }
                how = Verification.NONE;
            }

            MessageDigest md = sha256();
            if (start == 0) {
                ch.truncate(0);
            } else {
                hashPrefix(ch, start, md);
            }
            long pos = start;
            byte[] buf = new byte[BUFFER];
            listener.progress(f.fileName(), pos, total);
            try {
                int n;
                while ((n = body.read(buf)) > 0) {
                    md.update(buf, 0, n);
                    ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                    while (bb.hasRemaining()) {
                        pos += ch.write(bb, pos);
                    }
                    listener.progress(f.fileName(), pos, total);
                }
            } catch (IOException e) {
                throw new Retryable("connection lost after " + pos + (total >= 0 ? " of " + total : "") + " bytes: " + e.getMessage(), e);
            }
            if (total >= 0 && pos != total) {
                throw new Retryable("the body ended after " + pos + " of " + total + " bytes", null);
            }
            String actual = HexFormat.of().formatHex(md.digest());
            if (expected != null && !expected.equals(actual)) {
                String msg = f.fileName() + ": SHA-256 mismatch for " + url + ": expected " + expected + " ("
                        + (how == Verification.PINNED ? "pinned in the registry" : "reported by the server") + "), got " + actual;
                throw new MismatchException(msg, start > 0);
            }
            return new Streamed(actual, how);
        }
    }

    private record Opened(HttpResponse<InputStream> response, URI finalUri, String serverSha256, long linkedSize) {
    }

    /** GET with redirects followed by hand; collects the Hub's hash headers from hops on the endpoint's host. */
    private Opened open(URI url, long from, boolean hub) throws IOException, InterruptedException {
        URI current = url;
        String serverSha = null;
        long linkedSize = -1;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            boolean originHost = sameOrigin(current, url);
            HttpRequest.Builder b = HttpRequest.newBuilder(current).GET().timeout(headerTimeout)
                    .header("User-Agent", "pagewarden-downloader");
            if (token != null && originHost) {
                // The token is for the Hub only; a CDN it redirects to must not see it.
                b.header("Authorization", "Bearer " + token);
            }
            if (from > 0) {
                b.header("Range", "bytes=" + from + "-");
            }
            HttpResponse<InputStream> r;
            try {
                r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException e) {
                throw new Retryable("cannot reach " + current + ": " + describe(e), e);
            }
            if (hub && originHost) {
                String linked = sha256Header(r.headers().firstValue("X-Linked-Etag").orElse(null));
                String etag = sha256Header(r.headers().firstValue("ETag").orElse(null));
                serverSha = linked != null ? linked : etag != null ? etag : serverSha;
                linkedSize = r.headers().firstValueAsLong("X-Linked-Size").orElse(linkedSize);
            }
            int s = r.statusCode();
            if (s == 301 || s == 302 || s == 303 || s == 307 || s == 308) {
                r.body().close();
                String location = r.headers().firstValue("Location")
                        .orElseThrow(() -> new DownloadException("HTTP " + s + " without a Location header from " + url));
                current = current.resolve(location);
                continue;
            }
            return new Opened(r, current, serverSha, linkedSize);
        }
        throw new DownloadException("more than " + MAX_REDIRECTS + " redirects from " + url);
    }

    private IOException httpError(int status, URI at, URI url) {
        String where = at.equals(url) ? url.toString() : url + " (redirected to " + at + ")";
        if (status == 404) {
            return new DownloadException("not found (HTTP 404): " + where);
        }
        if (status == 401 || status == 403) {
            return new DownloadException("HTTP " + status + " from " + where
                    + (token == null ? "; the repository may need a token (set HF_TOKEN)" : "; the token in HF_TOKEN was refused"));
        }
        if (status == 429 || status >= 500) {
            return new Retryable("HTTP " + status + " from " + where, null);
        }
        return new DownloadException("unexpected HTTP " + status + " from " + where);
    }

    private static String describe(IOException e) {
        return e.getMessage() != null ? e.getClass().getSimpleName() + ": " + e.getMessage() : e.getClass().getSimpleName();
    }

    private static boolean sameOrigin(URI a, URI b) {
        return Objects.equals(a.getScheme(), b.getScheme()) && Objects.equals(a.getHost(), b.getHost())
                && a.getPort() == b.getPort();
    }

    /** A header value that is a SHA-256 (quotes and a weak prefix stripped), or null. */
    static String sha256Header(String v) {
        if (v == null) {
            return null;
        }
        String s = v.trim();
        if (s.startsWith("W/")) {
            s = s.substring(2);
        }
        if (s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"")) {
            s = s.substring(1, s.length() - 1);
        }
        s = s.toLowerCase(Locale.ROOT);
        return RemoteFile.SHA256.matcher(s).matches() ? s : null;
    }

    private static void hashPrefix(FileChannel ch, long length, MessageDigest md) throws IOException {
        ByteBuffer bb = ByteBuffer.allocate(BUFFER);
        long pos = 0;
        while (pos < length) {
            bb.clear().limit((int) Math.min(BUFFER, length - pos));
            int n = ch.read(bb, pos);
            if (n < 0) {
                throw new IOException("partial file shorter than " + length + " bytes");
            }
            bb.flip();
            md.update(bb);
            pos += n;
        }
    }

    static String sha256Of(Path file) throws IOException {
        MessageDigest md = sha256();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            hashPrefix(ch, ch.size(), md);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JDK", e);
        }
    }

    /** {@code sha256sum} format, so {@code sha256sum -c FILE.sha256} works in the folder. */
    private static void writeSidecar(Path target, String sha) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".sha256.tmp");
        Files.writeString(tmp, sha + "  " + target.getFileName() + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, sidecar(target), StandardCopyOption.REPLACE_EXISTING);
    }

    private static String readSidecar(Path target) throws IOException {
        Path s = sidecar(target);
        if (!Files.isRegularFile(s)) {
            return null;
        }
        String text = Files.readString(s, StandardCharsets.UTF_8).trim();
        int sp = text.indexOf(' ');
        String hex = (sp < 0 ? text : text.substring(0, sp)).toLowerCase(Locale.ROOT);
        return RemoteFile.SHA256.matcher(hex).matches() ? hex : null;
    }

    /** Settings; every one has a default. */
    public static final class Builder {
        private ModelRegistry registry = ModelRegistry.defaults();
        private URI endpoint = DEFAULT_ENDPOINT;
        private String token;
        private boolean allowUnverified;
        private int maxAttempts = 4;
        private Duration retryBackoff = Duration.ofSeconds(1);
        private Duration timeout = Duration.ofSeconds(30);

        private Builder() {
        }

        public Builder registry(ModelRegistry r) {
            this.registry = Objects.requireNonNull(r);
            return this;
        }

        /** Hugging Face endpoint, e.g. a mirror; {@code https://huggingface.co} by default. */
        public Builder endpoint(URI e) {
            String scheme = e.getScheme();
            if (!"https".equals(scheme) && !"http".equals(scheme) || e.getHost() == null) {
                throw new IllegalArgumentException("Hugging Face endpoint must be an http(s) URL, got '" + e + "'");
            }
            this.endpoint = e;
            return this;
        }

        /** Bearer token sent to the endpoint's host only (never to the CDN it redirects to); null for none. */
        public Builder token(String t) {
            this.token = t == null || t.isBlank() ? null : t.trim();
            return this;
        }

        /** Endpoint from {@code PAGEWARDEN_HF_ENDPOINT} (else {@code HF_ENDPOINT}), token from {@code HF_TOKEN}. */
        public Builder environment(Map<String, String> env) {
            String e = env.get(ENDPOINT_ENV);
            if (e == null || e.isBlank()) {
                e = env.get("HF_ENDPOINT");
            }
            if (e != null && !e.isBlank()) {
                try {
                    endpoint(URI.create(e.trim()));
                } catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException(ENDPOINT_ENV + "/HF_ENDPOINT: " + ex.getMessage(), ex);
                }
            }
            return token(env.get("HF_TOKEN"));
        }

        /** Allow files for which no SHA-256 is known (neither pinned nor sent by the server). Off by default. */
        public Builder allowUnverified(boolean allow) {
            this.allowUnverified = allow;
            return this;
        }

        /** Attempts per file for cut connections and 5xx answers, each resuming where the last stopped (default 4). */
        public Builder maxAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxAttempts must be >= 1, got " + n);
            }
            this.maxAttempts = n;
            return this;
        }

        /** Wait before attempt k+1 is k times this (default 1 s; zero for tests). */
        public Builder retryBackoff(Duration d) {
            this.retryBackoff = Objects.requireNonNull(d);
            return this;
        }

        /** Connect timeout and the wait for response headers (default 30 s). */
        public Builder timeout(Duration d) {
            this.timeout = Objects.requireNonNull(d);
            return this;
        }

        public ModelDownloader build() {
            return new ModelDownloader(this);
        }
    }
}
