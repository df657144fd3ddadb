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
     * locally, no network is used for it). A name with a '/' is a Hugging Face reference, see
     * {@link #ensure(HubReference, Path, ProgressListener)}.
     *
     * @throws IllegalArgumentException for an unknown name (the message lists the known ones) or a malformed reference
     * @throws DownloadException        when a file cannot be fetched or verified; the message names the URL and the reason
     */
    public ResolvedModel ensure(String name, Path dir, ProgressListener listener) throws DownloadException, InterruptedException {
        if (HubReference.looksLike(name)) {
            return ensure(HubReference.parse(name), dir, listener);
        }
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

    /**
     * Makes sure a Hugging Face model is in {@code dir/org/repo/}, each file verified against the hash
     * the Hub lists for the revision (SHA-256 for LFS files, git blob SHA-1 for small ones): one file
     * ({@code org/repo:file.gguf}), or a whole safetensors repository - {@code config.json}, the weights
     * ({@code model.safetensors}, or the shards {@code model.safetensors.index.json} names), and the
     * tokenizer and generation files when listed. When the Hub cannot be reached, files a previous run
     * verified are used as they are, checked against the hashes it recorded.
     *
     * @throws IllegalArgumentException for a malformed reference
     * @throws DownloadException        when the repository, revision or a file is missing, access is refused, or a
     *                                  file cannot be fetched or verified; the message names it and the reason
     */
    public ResolvedModel ensure(HubReference ref, Path dir, ProgressListener listener) throws DownloadException, InterruptedException {
        Path folder = ref.folder(dir);
        String parent = ref.file() == null || !ref.file().contains("/") ? "" : ref.file().substring(0, ref.file().lastIndexOf('/'));
        if (ref.pinned() && Files.isRegularFile(manifestOf(ref, folder))) {
            // A commit's files never change: those verified for it before need no Hub, only their recorded hashes.
            ResolvedModel done = recorded(ref, folder, listener);
            if (done != null) {
                listener.message(ref + ": verified against the SHA-256 recorded when the pinned revision was downloaded");
                return done;
            }
        }
        HubTree tree;
        try {
            // With a verified copy at hand one try is enough before using it.
            tree = listTree(ref, parent, Files.isRegularFile(manifestOf(ref, folder)) ? 1 : maxAttempts);
        } catch (Retryable e) {
            ResolvedModel offline = recorded(ref, folder, listener);
            if (offline != null) {
                listener.message(ref + ": the Hub cannot be reached (" + e.getMessage() + "); using the files verified before");
                return offline;
            }
            throw new DownloadException(ref + ": cannot list the repository's files: " + e.getMessage(), e);
        } catch (IOException e) {
            throw e instanceof DownloadException d ? d : new DownloadException(ref + ": " + e.getMessage(), e);
        }
        List<FileStatus> statuses = new ArrayList<>();
        if (ref.file() != null) {
            HubTree.Entry e = tree.find(ref.file());
            if (e == null) {
                throw new DownloadException(ref.repo() + " has no file '" + ref.file() + "' at revision " + ref.revision()
                        + "; its GGUF files" + (parent.isEmpty() ? "" : " in " + parent + "/") + ": " + tree.namesEnding(".gguf"));
            }
            statuses.add(ensureFile(e.remote(ref), folder, listener));
            recordManifest(ref, folder, statuses);
            return new ResolvedModel(ref.id(), statuses.getFirst().path(), null, statuses);
        }
        HubTree.Entry config = tree.find(HubTree.CONFIG);
        HubTree.Entry index = tree.find(HubTree.INDEX);
        HubTree.Entry single = tree.find(HubTree.SINGLE_WEIGHTS);
        if (config == null || index == null && single == null) {
            throw new DownloadException(ref.repo() + " at revision " + ref.revision() + " is no safetensors model: it lists "
                    + (config == null ? "no " + HubTree.CONFIG : "no " + HubTree.SINGLE_WEIGHTS + " nor " + HubTree.INDEX)
                    + "; for a GGUF repository name the file, " + ref.repo() + ":FILE.gguf (its GGUF files: "
                    + tree.namesEnding(".gguf") + ")");
        }
        statuses.add(ensureFile(config.remote(ref), folder, listener));
        List<HubTree.Entry> weights = new ArrayList<>();
        if (index != null) {
            FileStatus idx = ensureFile(index.remote(ref), folder, listener);
            statuses.add(idx);
            List<String> shards;
            try {
                shards = HubTree.shardsOf(Files.readString(idx.path(), StandardCharsets.UTF_8));
            } catch (IOException | IllegalArgumentException ex) {
                throw new DownloadException(ref + ": " + idx.path() + ": " + ex.getMessage(), ex);
            }
            for (String shard : shards) {
                HubTree.Entry e = tree.find(shard);
                if (e == null) {
                    throw new DownloadException(ref + ": " + HubTree.INDEX + " names shard '" + shard
                            + "', which the repository does not list; its safetensors files: " + tree.namesEnding(".safetensors"));
                }
                weights.add(e);
            }
        } else {
            weights.add(single);
        }
        for (HubTree.Entry w : weights) {
            statuses.add(ensureFile(w.remote(ref), folder, listener));
        }
        for (String extra : HubTree.FOLDER_EXTRAS) {
            HubTree.Entry e = tree.find(extra);
            if (e != null) {
                statuses.add(ensureFile(e.remote(ref), folder, listener));
            }
        }
        recordManifest(ref, folder, statuses);
        return new ResolvedModel(ref.id(), folder, null, statuses);
    }

    /**
     * The files of a reference's last complete download ({@code .hub-REF} in its folder: the revision
     * and the file names), each checked against its recorded SHA-256; null when there are none or one
     * fails its check.
     */
    private ResolvedModel recorded(HubReference ref, Path folder, ProgressListener listener) throws DownloadException {
        Path manifest = manifestOf(ref, folder);
        try {
            if (!Files.isRegularFile(manifest)) {
                return null;
            }
            List<String> lines = Files.readAllLines(manifest, StandardCharsets.UTF_8);
            if (lines.isEmpty() || !lines.getFirst().equals("revision " + ref.revision())) {
                return null;
            }
            List<FileStatus> statuses = new ArrayList<>();
            for (String name : lines.subList(1, lines.size())) {
                Path p = folder.resolve(name);
                String expected = readSidecar(p);
                if (name.isEmpty() || name.contains("/") || expected == null || !Files.isRegularFile(p)) {
                    return null;
                }
                String actual = sha256Of(p);
                if (!actual.equals(expected)) {
                    listener.message(p + ": its SHA-256 is " + actual + ", recorded " + expected);
                    return null;
                }
                statuses.add(new FileStatus(p, actual, Verification.RECORDED, false));
            }
            if (statuses.isEmpty()) {
                return null;
            }
            return new ResolvedModel(ref.id(), ref.file() == null ? folder : statuses.getFirst().path(), null, statuses);
        } catch (IOException e) {
            throw new DownloadException(manifest + ": " + e.getMessage(), e);
        }
    }

    private static Path manifestOf(HubReference ref, Path folder) {
        return folder.resolve(".hub-" + (ref.file() == null ? "repository" : ref.fileName()));
    }

    private static void recordManifest(HubReference ref, Path folder, List<FileStatus> statuses) throws DownloadException {
        StringBuilder sb = new StringBuilder("revision " + ref.revision() + "\n");
        for (FileStatus f : statuses) {
            sb.append(f.path().getFileName()).append('\n');
        }
        Path manifest = manifestOf(ref, folder);
        Path tmp = manifest.resolveSibling(manifest.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, sb.toString(), StandardCharsets.UTF_8);
            Files.move(tmp, manifest, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new DownloadException(manifest + ": " + e.getMessage(), e);
        }
    }

    /** A folder of the repository as the Hub lists it, following its {@code Link: <...>; rel="next"} pages. */
    private HubTree listTree(HubReference ref, String folder, int attempts) throws IOException, InterruptedException {
        String base = endpoint.toString().replaceAll("/+$", "");
        URI next = URI.create(base + "/api/models/" + ref.repo() + "/tree/" + ref.revision() + (folder.isEmpty() ? "" : "/" + folder));
        List<HubTree.Entry> entries = new ArrayList<>();
        for (int page = 0; next != null; page++) {
            if (page >= MAX_PAGES) {
                throw new DownloadException(ref + ": the file listing has more than " + MAX_PAGES + " pages");
            }
            URI url = next;
            String body = null;
            for (int attempt = 1; body == null; attempt++) {
                try {
                    Opened o = open(url, 0, false);
                    try (InputStream in = o.response.body()) {
                        int status = o.response.statusCode();
                        if (status != 200) {
                            throw hubError(ref, status, o.response, url);
                        }
                        body = readAll(in, url);
                        next = nextPage(o.response.headers().firstValue("Link").orElse(null), url);
                    }
                } catch (Retryable e) {
                    if (attempt >= attempts) {
                        throw e;
                    }
                    if (!retryBackoff.isZero()) {
                        Thread.sleep(retryBackoff.multipliedBy(attempt));
                    }
                }
            }
            try {
                entries.addAll(HubTree.parsePage(body, "file listing " + url));
            } catch (IllegalArgumentException e) {
                throw new DownloadException(e.getMessage(), e);
            }
        }
        return new HubTree(ref, entries);
    }

    private static final int MAX_PAGES = 1000;
    private static final int MAX_LISTING_BYTES = 64 << 20;
    private static final Pattern NEXT_LINK = Pattern.compile("<([^>]+)>\\s*;\\s*rel=\"?next\"?");

    private static URI nextPage(String link, URI current) {
        if (link == null) {
            return null;
        }
        Matcher m = NEXT_LINK.matcher(link);
        return m.find() ? current.resolve(m.group(1)) : null;
    }

    private String readAll(InputStream in, URI url) throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[BUFFER];
        try (StallWatch watch = new StallWatch(in, headerTimeout)) {
            try {
                int n;
                while ((n = in.read(buf)) > 0) {
                    watch.progress();
                    bytes.write(buf, 0, n);
                    if (bytes.size() > MAX_LISTING_BYTES) {
                        throw new DownloadException(url + ": answer larger than " + MAX_LISTING_BYTES + " bytes");
                    }
                }
            } catch (DownloadException e) {
                throw e;
            } catch (IOException e) {
                throw new Retryable((watch.stalled() ? watch.describe() : "connection lost") + " reading " + url, e);
            }
            if (watch.stalled()) {
                throw new Retryable(watch.describe() + " reading " + url, null);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** The Hub says why in {@code X-Error-Code} (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo). */
    private IOException hubError(HubReference ref, int status, HttpResponse<?> r, URI url) {
        String code = r.headers().firstValue("X-Error-Code").orElse("");
        String said = r.headers().firstValue("X-Error-Message").map(m -> " (the Hub says: " + m.replaceAll("\\p{Cntrl}", " ") + ")")
                .orElse("");
        String tokenHint = token == null ? "; if it is private or gated, set HF_TOKEN to a token with access"
                : "; the token in HF_TOKEN may lack access to it";
        if (code.equals("RevisionNotFound")) {
            return new DownloadException("revision '" + ref.revision() + "' not found in " + ref.repo() + " (HTTP " + status + ", "
                    + url + ")" + said);
        }
        if (code.equals("GatedRepo")) {
            return new DownloadException(ref.repo() + " is gated (HTTP " + status + ", " + url + "): accept its terms on the Hub"
                    + (token == null ? " and set HF_TOKEN to a token of that account" : "; the token in HF_TOKEN has no access yet")
                    + said);
        }
        if (code.equals("RepoNotFound") || status == 404 && code.isEmpty()) {
            return new DownloadException("repository " + ref.repo() + " not found (HTTP " + status + ", " + url + ")" + tokenHint + said);
        }
        if (code.equals("EntryNotFound")) {
            return new DownloadException(ref.repo() + " has no such folder at revision " + ref.revision() + " (HTTP " + status
                    + ", " + url + ")" + said);
        }
        if (status == 401 || status == 403) {
            return new DownloadException("access to " + ref.repo() + " refused (HTTP " + status + ", " + url + ")"
                    + (token == null ? "; the repository may need a token (set HF_TOKEN)" : "; the token in HF_TOKEN was refused") + said);
        }
        if (status == 429 || status >= 500) {
            return new Retryable("HTTP " + status + " from " + url + said, null);
        }
        return new DownloadException("unexpected HTTP " + status + " from " + url + said);
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
        if (f.gitBlobSha1() != null) {
            String actual = gitBlobSha1Of(target);
            if (!actual.equals(f.gitBlobSha1())) {
                listener.message(target.getFileName() + ": present but its git blob SHA-1 is " + actual + ", expected "
                        + f.gitBlobSha1() + " (" + f.hashOrigin() + "); downloading it again");
                Files.delete(target);
                return null;
            }
            String sha = sha256Of(target);
            if (!sha.equals(readSidecar(target))) {
                writeSidecar(target, sha);
            }
            listener.message(target.getFileName() + ": present, git blob SHA-1 verified");
            return new FileStatus(target, sha, Verification.LISTED, false);
        }
        String expected = f.sha256();
        Verification how = f.listed() ? Verification.LISTED : Verification.PINNED;
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
        if (how != Verification.RECORDED && !actual.equals(readSidecar(target))) {
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
            if (f.size() >= 0 && total >= 0 && f.size() != total) {
                throw new DownloadException(f.fileName() + ": " + f.size() + " bytes " + f.hashOrigin() + " but " + o.finalUri
                        + " serves " + total + "; refusing to download");
            }
            if (total < 0) {
                total = f.size();
            }
            String expected = f.sha256();
            Verification how = f.listed() ? Verification.LISTED : Verification.PINNED;
            if (expected != null && o.serverSha256 != null && !expected.equals(o.serverSha256)) {
                throw new DownloadException(f.fileName() + ": " + url + " reports SHA-256 " + o.serverSha256
                        + " but " + (f.listed() ? "the Hub's listing gives " : "the registry pins ") + expected
                        + " (the upstream file changed?); refusing to download");
            }
            if (expected == null && f.gitBlobSha1() == null) {
                expected = o.serverSha256;
                how = Verification.SERVER;
            }
            if (expected == null && f.gitBlobSha1() == null) {
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
            try (StallWatch watch = new StallWatch(body, headerTimeout)) {
                try {
                    int n;
                    while ((n = body.read(buf)) > 0) {
                        watch.progress();
                        md.update(buf, 0, n);
                        ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                        while (bb.hasRemaining()) {
                            pos += ch.write(bb, pos);
                        }
                        listener.progress(f.fileName(), pos, total);
                    }
                } catch (IOException e) {
                    throw new Retryable((watch.stalled() ? watch.describe() : "connection lost") + " after " + pos
                            + (total >= 0 ? " of " + total : "") + " bytes: " + e.getMessage(), e);
                }
                if (watch.stalled()) {
                    throw new Retryable(watch.describe() + " after " + pos + (total >= 0 ? " of " + total : "") + " bytes", null);
                }
            }
            if (total >= 0 && pos != total) {
                throw new Retryable("the body ended after " + pos + " of " + total + " bytes", null);
            }
            String actual = HexFormat.of().formatHex(md.digest());
            if (expected != null && !expected.equals(actual)) {
                String msg = f.fileName() + ": SHA-256 mismatch for " + url + ": expected " + expected + " ("
                        + (how == Verification.SERVER ? "reported by the server" : f.hashOrigin()) + "), got " + actual;
                throw new MismatchException(msg, start > 0);
            }
            if (f.gitBlobSha1() != null) {
                // Small files are listed by their git blob hash; they are small, so hash them again from disk.
                String blob = gitBlobSha1Of(ch, pos);
                if (!blob.equals(f.gitBlobSha1())) {
                    throw new MismatchException(f.fileName() + ": git blob SHA-1 mismatch for " + url + ": expected "
                            + f.gitBlobSha1() + " (" + f.hashOrigin() + "), got " + blob, start > 0);
                }
            }
            return new Streamed(actual, how);
        }
    }

    /**
     * Closes a response body that delivers nothing for {@code limit}, which ends the blocked read: the
     * HTTP client's own timeout stops at the response headers, and a stalled body would wait forever.
     */
    static final class StallWatch implements AutoCloseable {
        private final Thread thread;
        private final Duration limit;
        private volatile long lastNanos = System.nanoTime();
        private volatile boolean stalled;

        StallWatch(InputStream body, Duration limit) {
            this.limit = limit;
            long limitNanos = limit.toNanos();
            this.thread = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        long idle = System.nanoTime() - lastNanos;
                        if (idle >= limitNanos) {
                            stalled = true;
                            body.close();
                            return;
                        }
                        Thread.sleep(Duration.ofNanos(limitNanos - idle));
                    }
                } catch (InterruptedException | IOException e) {
                    // closed normally, or the body is gone already
                }
            });
        }

        void progress() {
            lastNanos = System.nanoTime();
        }

        boolean stalled() {
            return stalled;
        }

        String describe() {
            return "no data for " + limit.toMillis() + " ms (timeout)";
        }

        @Override
        public void close() {
            thread.interrupt();
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

    /** Git's object id of a file: SHA-1 over {@code "blob <size>\0"} followed by the bytes. */
    static String gitBlobSha1Of(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return gitBlobSha1Of(ch, ch.size());
        }
    }

    private static String gitBlobSha1Of(FileChannel ch, long length) throws IOException {
        MessageDigest md = digest("SHA-1");
        md.update(("blob " + length + "\0").getBytes(StandardCharsets.US_ASCII));
        hashPrefix(ch, length, md);
        return HexFormat.of().formatHex(md.digest());
    }

    static String sha256Of(Path file) throws IOException {
        MessageDigest md = sha256();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            hashPrefix(ch, ch.size(), md);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static MessageDigest sha256() {
        return digest("SHA-256");
    }

    private static MessageDigest digest(String algorithm) {
        try {
            return MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no " + algorithm + " in this JDK", e);
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
