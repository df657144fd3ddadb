package dev.pagewarden.core.download;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local stand-in for huggingface.co, shaped after its documented answers: the file listing
 * ({@code /api/models/{repo}/tree/{revision}[/{folder}]}, paginated with a {@code Link} header), and
 * {@code /{repo}/resolve/{revision}/{path}}, which serves small files itself (ETag: the git blob id)
 * and redirects LFS files to a second server standing for the CDN ({@code X-Linked-Etag}: the
 * SHA-256, {@code X-Linked-Size}). Errors carry the Hub's {@code X-Error-Code}. Faults (corrupt bytes,
 * a cut or a stalled first transfer) are switched on per file.
 */
public final class FakeHub implements AutoCloseable {
    public record Requested(String server, String path, String query, String range, String authorization) {
    }

    private record HubFile(byte[] bytes, boolean lfs) {
    }

    private final HttpServer hub;
    private final HttpServer cdn;
    /** repo -> revision -> path -> file. */
    private final Map<String, Map<String, Map<String, HubFile>>> repos = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> bodyCalls = new ConcurrentHashMap<>();
    public final List<Requested> requests = Collections.synchronizedList(new ArrayList<>());
    /** Files (repository paths) served with one byte flipped; the listing keeps their true hashes. */
    public final Set<String> corrupt = ConcurrentHashMap.newKeySet();
    /** Files whose first transfer sends half the bytes and drops the connection. */
    public final Set<String> cutFirst = ConcurrentHashMap.newKeySet();
    /** Files whose first transfer sends half the bytes and then goes silent for {@link #stallMillis}. */
    public final Set<String> stallFirst = ConcurrentHashMap.newKeySet();
    public volatile long stallMillis = 3000;
    /** When set, the Hub (not the CDN) answers only requests carrying this bearer token, as for a gated repository. */
    public volatile String requiredToken;
    /** Entries per listing page; 0 for one page. */
    public volatile int pageSize;

    public FakeHub() throws IOException {
        hub = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        cdn = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        hub.createContext("/", ex -> handle("hub", ex));
        cdn.createContext("/", ex -> handle("cdn", ex));
        // A handler of its own per request: a stalled transfer must not hold up the retry.
        hub.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        cdn.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        hub.start();
        cdn.start();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + hub.getAddress().getPort());
    }

    /** Adds a file to a repository at a revision ({@code lfs}: served from the CDN, listed with its SHA-256). */
    public FakeHub file(String repo, String revision, String path, byte[] bytes, boolean lfs) {
        repos.computeIfAbsent(repo, r -> new ConcurrentHashMap<>()).computeIfAbsent(revision, r -> new ConcurrentHashMap<>())
                .put(path, new HubFile(bytes, lfs));
        return this;
    }

    public FakeHub file(String repo, String revision, String path, String text, boolean lfs) {
        return file(repo, revision, path, text.getBytes(StandardCharsets.UTF_8), lfs);
    }

    public List<Requested> requests(String server) {
        synchronized (requests) {
            return requests.stream().filter(r -> r.server().equals(server)).toList();
        }
    }

    @Override
    public void close() {
        hub.stop(0);
        cdn.stop(0);
    }

    public static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Git's blob id: SHA-1 over "blob SIZE\0" and the bytes (checked against git itself in HubDownloadTest). */
    public static String gitBlobSha1(byte[] b) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-1");
            md.update(("blob " + b.length + "\0").getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(md.digest(b));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private void handle(String server, HttpExchange ex) throws IOException {
        URI u = ex.getRequestURI();
        requests.add(new Requested(server, u.getPath(), u.getQuery(), ex.getRequestHeaders().getFirst("Range"),
                ex.getRequestHeaders().getFirst("Authorization")));
        try (ex) {
            if (server.equals("cdn")) {
                cdn(ex, u.getPath());
                return;
            }
            if (requiredToken != null && !("Bearer " + requiredToken).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                error(ex, ex.getRequestHeaders().getFirst("Authorization") == null ? 401 : 403, "GatedRepo",
                        "Access to this model is restricted. You must be authenticated and have accepted its terms.");
                return;
            }
            String p = u.getPath();
            if (p.startsWith("/api/models/")) {
                tree(ex, p.substring("/api/models/".length()), u.getQuery());
            } else {
                resolve(ex, p.substring(1));
            }
        }
    }

    /** {org}/{name}/tree/{revision}[/{folder}] */
    private void tree(HttpExchange ex, String rest, String query) throws IOException {
        String[] s = rest.split("/", 5);
        if (s.length < 4 || !s[2].equals("tree")) {
            error(ex, 404, null, "not found");
            return;
        }
        Map<String, HubFile> files = files(ex, s[0] + "/" + s[1], s[3]);
        if (files == null) {
            return;
        }
        String folder = s.length == 5 ? s[4] : "";
        String prefix = folder.isEmpty() ? "" : folder + "/";
        TreeMap<String, String> entries = new TreeMap<>();
        Set<String> dirs = new TreeSet<>();
        for (Map.Entry<String, HubFile> e : new TreeMap<>(files).entrySet()) {
            String path = e.getKey();
            if (!path.startsWith(prefix)) {
                continue;
            }
            String below = path.substring(prefix.length());
            if (below.contains("/")) {
                dirs.add(prefix + below.substring(0, below.indexOf('/')));
                continue;
            }
            byte[] b = e.getValue().bytes();
            String entry;
            if (e.getValue().lfs()) {
                // An LFS file's git blob is its pointer; the content's hash is lfs.oid.
                byte[] pointer = ("version https://git-lfs.github.com/spec/v1\noid sha256:" + sha256(b) + "\nsize " + b.length + "\n")
                        .getBytes(StandardCharsets.US_ASCII);
                entry = String.format("{\"type\":\"file\",\"oid\":\"%s\",\"size\":%d,\"lfs\":{\"oid\":\"%s\",\"size\":%d,"
                        + "\"pointerSize\":%d},\"path\":\"%s\"}", gitBlobSha1(pointer), b.length, sha256(b), b.length, pointer.length, path);
            } else {
                entry = String.format("{\"type\":\"file\",\"oid\":\"%s\",\"size\":%d,\"path\":\"%s\"}", gitBlobSha1(b), b.length, path);
            }
            entries.put(path, entry);
        }
        if (entries.isEmpty() && dirs.isEmpty()) {
            error(ex, 404, "EntryNotFound", "no folder " + folder);
            return;
        }
        List<String> all = new ArrayList<>();
        for (String d : dirs) {
            all.add("{\"type\":\"directory\",\"oid\":\"" + "0".repeat(40) + "\",\"size\":0,\"path\":\"" + d + "\"}");
        }
        all.addAll(entries.values());
        int from = query != null && query.startsWith("cursor=") ? Integer.parseInt(query.substring(7)) : 0;
        int to = pageSize > 0 ? Math.min(all.size(), from + pageSize) : all.size();
        if (to < all.size()) {
            ex.getResponseHeaders().add("Link", "<" + endpoint() + ex.getRequestURI().getPath() + "?cursor=" + to + ">; rel=\"next\"");
        }
        byte[] body = ("[" + String.join(",", all.subList(from, to)) + "]").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(200, body.length);
        ex.getResponseBody().write(body);
    }

    /** {org}/{name}/resolve/{revision}/{path} */
    private void resolve(HttpExchange ex, String rest) throws IOException {
        String[] s = rest.split("/", 5);
        if (s.length < 5 || !s[2].equals("resolve")) {
            error(ex, 404, null, "not found");
            return;
        }
        Map<String, HubFile> files = files(ex, s[0] + "/" + s[1], s[3]);
        if (files == null) {
            return;
        }
        HubFile f = files.get(s[4]);
        if (f == null) {
            error(ex, 404, "EntryNotFound", "Entry not found");
            return;
        }
        if (f.lfs()) {
            ex.getResponseHeaders().add("X-Linked-Etag", "\"" + sha256(f.bytes()) + "\"");
            ex.getResponseHeaders().add("X-Linked-Size", "" + f.bytes().length);
            ex.getResponseHeaders().add("Location", "http://127.0.0.1:" + cdn.getAddress().getPort() + "/blobs/" + s[0] + "/"
                    + s[1] + "/" + s[3] + "/" + s[4]);
            ex.sendResponseHeaders(302, -1);
            return;
        }
        ex.getResponseHeaders().add("ETag", "\"" + gitBlobSha1(f.bytes()) + "\"");
        body(ex, s[4], f.bytes());
    }

    /** /blobs/{org}/{name}/{revision}/{path}: the LFS content, as the CDN would serve it. */
    private void cdn(HttpExchange ex, String path) throws IOException {
        String[] s = path.substring("/blobs/".length()).split("/", 4);
        HubFile f = repos.getOrDefault(s[0] + "/" + s[1], Map.of()).getOrDefault(s[2], Map.of()).get(s[3]);
        if (f == null) {
            ex.sendResponseHeaders(404, -1);
            return;
        }
        ex.getResponseHeaders().add("ETag", "\"cdn-" + s[3].hashCode() + "\"");
        body(ex, s[3], f.bytes());
    }

    private void body(HttpExchange ex, String path, byte[] content) throws IOException {
        byte[] b = content;
        if (corrupt.contains(path)) {
            b = content.clone();
            b[b.length / 3] ^= 0x20;
        }
        int call = bodyCalls.computeIfAbsent(path, k -> new AtomicInteger()).incrementAndGet();
        String range = ex.getRequestHeaders().getFirst("Range");
        int from = range == null ? 0 : Integer.parseInt(range.substring("bytes=".length(), range.length() - 1));
        if (from > 0) {
            ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (b.length - 1) + "/" + b.length);
            ex.sendResponseHeaders(206, b.length - from);
        } else {
            ex.sendResponseHeaders(200, b.length);
        }
        OutputStream os = ex.getResponseBody();
        if (call == 1 && (cutFirst.contains(path) || stallFirst.contains(path))) {
            os.write(b, from, (b.length - from) / 2);
            os.flush();
            if (stallFirst.contains(path)) {
                try {
                    Thread.sleep(stallMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            // An exception out of a handler makes the JDK server close the connection mid-body.
            throw new IOException("cut");
        }
        os.write(b, from, b.length - from);
    }

    /** The files of a repository at a revision, or null after answering the Hub's error. */
    private Map<String, HubFile> files(HttpExchange ex, String repo, String revision) throws IOException {
        Map<String, Map<String, HubFile>> r = repos.get(repo);
        if (r == null) {
            // Anonymous callers get 401 for a missing repository: the Hub does not say whether a private one exists.
            error(ex, 401, "RepoNotFound", "Repository not found");
            return null;
        }
        Map<String, HubFile> files = r.get(revision);
        if (files == null) {
            error(ex, 404, "RevisionNotFound", "Invalid rev id: " + revision);
            return null;
        }
        return files;
    }

    private static void error(HttpExchange ex, int status, String code, String message) throws IOException {
        if (code != null) {
            ex.getResponseHeaders().add("X-Error-Code", code);
        }
        ex.getResponseHeaders().add("X-Error-Message", message);
        byte[] body = ("{\"error\":\"" + message + "\"}").getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, body.length);
        ex.getResponseBody().write(body);
    }
}
