package dev.pagewarden.core.download;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.pagewarden.core.download.ResolvedModel.Verification;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The downloader against local HTTP servers: a fake Hub and a fake CDN it redirects to. */
class ModelDownloaderTest {
    @TempDir
    Path dir;

    private final byte[] model = bytes(300_000, 1);
    private final byte[] tokenizer = bytes(5_000, 2);
    private HttpServer hub;
    private HttpServer cdn;
    /** path -> handler behaviour; set per test. */
    private final Map<String, Route> routes = new ConcurrentHashMap<>();
    private final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
    private final List<String> messages = Collections.synchronizedList(new ArrayList<>());

    record Request(String server, String path, String range, String authorization) {
    }

    @FunctionalInterface
    interface Route {
        void handle(HttpExchange ex, int call) throws IOException;
    }

    @BeforeEach
    void start() throws IOException {
        hub = server("hub");
        cdn = server("cdn");
    }

    @AfterEach
    void stop() {
        hub.stop(0);
        cdn.stop(0);
    }

    private HttpServer server(String name) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        s.createContext("/", ex -> {
            String key = name + ":" + ex.getRequestURI().getPath();
            requests.add(new Request(name, ex.getRequestURI().getPath(), ex.getRequestHeaders().getFirst("Range"),
                    ex.getRequestHeaders().getFirst("Authorization")));
            Route r = routes.get(key);
            try (ex) {
                if (r == null) {
                    ex.sendResponseHeaders(404, -1);
                } else {
                    r.handle(ex, calls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet());
                }
            }
        });
        s.start();
        return s;
    }

    private URI hubUri() {
        return URI.create("http://127.0.0.1:" + hub.getAddress().getPort());
    }

    private String cdnUrl(String path) {
        return "http://127.0.0.1:" + cdn.getAddress().getPort() + path;
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String sha(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /** Serves {@code body} (honouring a Range header when {@code ranges}), with extra headers. */
    static Route serve(byte[] body, boolean ranges, Map<String, String> headers) {
        return (ex, call) -> {
            headers.forEach((k, v) -> ex.getResponseHeaders().add(k, v));
            String range = ex.getRequestHeaders().getFirst("Range");
            if (ranges && range != null) {
                int from = Integer.parseInt(range.substring("bytes=".length(), range.length() - 1));
                ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (body.length - 1) + "/" + body.length);
                ex.sendResponseHeaders(206, body.length - from);
                ex.getResponseBody().write(body, from, body.length - from);
            } else {
                ex.sendResponseHeaders(200, body.length);
                ex.getResponseBody().write(body);
            }
        };
    }

    /** A 302 from the Hub to the CDN, carrying the Hub's hash headers (as huggingface.co does for LFS files). */
    Route redirect(String cdnPath, Map<String, String> headers) {
        return (ex, call) -> {
            headers.forEach((k, v) -> ex.getResponseHeaders().add(k, v));
            ex.getResponseHeaders().add("Location", cdnUrl(cdnPath));
            ex.sendResponseHeaders(302, -1);
        };
    }

    private ModelRegistry registry(String modelSha, String tokSha) {
        return new ModelRegistry(List.of(new ModelSpec("tiny", "test model",
                new RemoteFile("tiny.bin", new RemoteFile.HuggingFace("org/repo", "main", "tiny.bin"), modelSha),
                new RemoteFile("tok.bin", new RemoteFile.HuggingFace("org/repo", "main", "sub/tok.bin"), tokSha))));
    }

    private ModelDownloader.Builder downloader(ModelRegistry r) {
        return ModelDownloader.builder().registry(r).endpoint(hubUri()).retryBackoff(Duration.ZERO).timeout(Duration.ofSeconds(10));
    }

    private ResolvedModel ensure(ModelDownloader d) throws Exception {
        return d.ensure("tiny", dir, new ProgressListener() {
            @Override
            public void progress(String file, long done, long total) {
                assertThat(total == -1 || done <= total).isTrue();
            }

            @Override
            public void message(String line) {
                messages.add(line);
            }
        });
    }

    private List<String> leftovers() throws IOException {
        try (var s = Files.list(dir.resolve("tiny"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".part")).toList();
        }
    }

    @Test
    void pinnedHashesVerifyADirectDownload() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin", serve(model, true, Map.of()));
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of()));
        ResolvedModel m = ensure(downloader(registry(sha(model), sha(tokenizer))).build());
        assertThat(m.model()).isEqualTo(dir.resolve("tiny/tiny.bin")).hasBinaryContent(model);
        assertThat(m.tokenizer()).isEqualTo(dir.resolve("tiny/tok.bin")).hasBinaryContent(tokenizer);
        assertThat(m.files()).allSatisfy(f -> {
            assertThat(f.verification()).isEqualTo(Verification.PINNED);
            assertThat(f.downloaded()).isTrue();
        });
        assertThat(dir.resolve("tiny/tiny.bin.sha256")).hasContent(sha(model) + "  tiny.bin");
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void hubHashFromXLinkedEtagVerifiesARedirectedDownloadAndTheTokenStaysOnTheHub() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin",
                redirect("/cdn/blob1", Map.of("X-Linked-Etag", "\"" + sha(model) + "\"", "X-Linked-Size", "" + model.length,
                        "ETag", "\"0123456789012345678901234567890123456789\"")));
        // The CDN's own 64-hex ETag is someone else's hash: it must be ignored.
        routes.put("cdn:/cdn/blob1", serve(model, true, Map.of("ETag", "\"" + sha(tokenizer) + "\"")));
        // Non-LFS style: the Hub serves the file itself with its SHA-256 as ETag.
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of("ETag", "\"" + sha(tokenizer) + "\"")));
        ResolvedModel m = ensure(downloader(registry(null, null)).token("hf_secret").build());
        assertThat(m.model()).hasBinaryContent(model);
        assertThat(m.files()).extracting(ResolvedModel.FileStatus::verification).containsOnly(Verification.SERVER);
        assertThat(requests).filteredOn(r -> r.server().equals("hub")).extracting(Request::authorization)
                .containsOnly("Bearer hf_secret");
        assertThat(requests).filteredOn(r -> r.server().equals("cdn")).extracting(Request::authorization).containsOnlyNulls();
    }

    @Test
    void aHashMismatchDeletesTheDownloadAndNamesBothHashes() throws Exception {
        String wrong = sha(tokenizer);
        routes.put("hub:/org/repo/resolve/main/tiny.bin", redirect("/cdn/blob1", Map.of("X-Linked-Etag", wrong)));
        routes.put("cdn:/cdn/blob1", serve(model, true, Map.of()));
        assertThatThrownBy(() -> ensure(downloader(registry(null, null)).build()))
                .isInstanceOf(DownloadException.class)
                .hasMessageContaining("SHA-256 mismatch").hasMessageContaining("/org/repo/resolve/main/tiny.bin")
                .hasMessageContaining("expected " + wrong + " (reported by the server)")
                .hasMessageContaining("got " + sha(model)).hasMessageContaining("deleted");
        try (var s = Files.list(dir.resolve("tiny"))) {
            assertThat(s.toList()).isEmpty();
        }
    }

    @Test
    void aPinDisagreeingWithTheServerIsRefusedBeforeTheBody() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin", redirect("/cdn/blob1", Map.of("X-Linked-Etag", sha(tokenizer))));
        routes.put("cdn:/cdn/blob1", serve(model, true, Map.of()));
        assertThatThrownBy(() -> ensure(downloader(registry(sha(model), null)).build()))
                .hasMessageContaining("reports SHA-256 " + sha(tokenizer)).hasMessageContaining("pins " + sha(model));
        assertThat(leftovers()).isEmpty();
    }

    /** The first response sends half the body and then drops the connection. */
    private Route cutOnFirstCall(byte[] body, Map<String, String> headers) {
        Route full = serve(body, true, headers);
        return (ex, call) -> {
            if (call == 1) {
                headers.forEach((k, v) -> ex.getResponseHeaders().add(k, v));
                ex.sendResponseHeaders(200, body.length);
                OutputStream os = ex.getResponseBody();
                os.write(body, 0, body.length / 2);
                os.flush();
                // An exception out of a handler makes the JDK server close the connection mid-body.
                throw new IOException("cut");
            }
            full.handle(ex, call);
        };
    }

    @Test
    void aCutConnectionIsResumedWithARangeRequest() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin", redirect("/cdn/blob1", Map.of("X-Linked-Etag", sha(model))));
        routes.put("cdn:/cdn/blob1", cutOnFirstCall(model, Map.of()));
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of()));
        ResolvedModel m = ensure(downloader(registry(null, sha(tokenizer))).build());
        assertThat(m.model()).hasBinaryContent(model);
        List<Request> cdnCalls = requests.stream().filter(r -> r.server().equals("cdn")).toList();
        assertThat(cdnCalls).hasSize(2);
        assertThat(cdnCalls.get(0).range()).isNull();
        // How much of the half sent arrives before the cut is the network's business; the resume must start there.
        long resumedAt = Long.parseLong(cdnCalls.get(1).range().replaceAll("bytes=(\\d+)-", "$1"));
        assertThat(resumedAt).isPositive().isLessThanOrEqualTo(model.length / 2);
        assertThat(messages).anyMatch(s -> s.contains("resuming at " + resumedAt + " bytes"));
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void aPartialFileLeftByAFailedRunIsResumedByTheNextOne() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin", cutOnFirstCall(model, Map.of()));
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of()));
        ModelRegistry reg = registry(sha(model), sha(tokenizer));
        assertThatThrownBy(() -> ensure(downloader(reg).maxAttempts(1).build()))
                .isInstanceOf(DownloadException.class).hasMessageContaining("giving up after 1 attempts")
                .hasMessageContaining("next run resumes it");
        long kept = Files.size(dir.resolve("tiny/tiny.bin.part"));
        assertThat(kept).isPositive().isLessThanOrEqualTo(model.length / 2);
        ResolvedModel m = ensure(downloader(reg).build());
        assertThat(m.model()).hasBinaryContent(model);
        assertThat(requests.stream().filter(r -> r.path().endsWith("tiny.bin")).map(Request::range).toList())
                .containsExactly(null, "bytes=" + kept + "-");
    }

    @Test
    void aServerWithoutRangesRestartsFromZero() throws Exception {
        Route cut = cutOnFirstCall(model, Map.of());
        Route noRanges = serve(model, false, Map.of());
        routes.put("hub:/org/repo/resolve/main/tiny.bin", (ex, call) -> (call == 1 ? cut : noRanges).handle(ex, call));
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of()));
        ResolvedModel m = ensure(downloader(registry(sha(model), sha(tokenizer))).build());
        assertThat(m.model()).hasBinaryContent(model);
    }

    @Test
    void a404NamesTheUrlAndLeavesNothing() throws Exception {
        assertThatThrownBy(() -> ensure(downloader(registry(sha(model), sha(tokenizer))).build()))
                .isInstanceOf(DownloadException.class)
                .hasMessageContaining("not found (HTTP 404): " + hubUri() + "/org/repo/resolve/main/tiny.bin");
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void aVerifiedFileAlreadyPresentIsNotDownloadedAgainAndACorruptOneIs() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin", redirect("/cdn/blob1", Map.of("X-Linked-Etag", sha(model))));
        routes.put("cdn:/cdn/blob1", serve(model, true, Map.of()));
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of()));
        ModelDownloader d = downloader(registry(null, sha(tokenizer))).build();
        ensure(d);
        int before = requests.size();
        ResolvedModel again = ensure(d);
        assertThat(requests).hasSize(before);
        assertThat(again.files()).extracting(ResolvedModel.FileStatus::verification)
                .containsExactly(Verification.RECORDED, Verification.PINNED);
        assertThat(again.files()).noneMatch(ResolvedModel.FileStatus::downloaded);

        byte[] damaged = model.clone();
        damaged[1000] ^= 1;
        Files.write(again.model(), damaged);
        ResolvedModel repaired = ensure(d);
        assertThat(repaired.model()).hasBinaryContent(model);
        assertThat(repaired.files().getFirst().downloaded()).isTrue();
        assertThat(messages).anyMatch(s -> s.contains("present but its SHA-256 is"));
    }

    @Test
    void withoutAnyKnownHashTheDownloadIsRefusedUnlessAllowed() throws Exception {
        routes.put("hub:/org/repo/resolve/main/tiny.bin", serve(model, true, Map.of("ETag", "\"abc\"")));
        routes.put("hub:/org/repo/resolve/main/sub/tok.bin", serve(tokenizer, true, Map.of()));
        assertThatThrownBy(() -> ensure(downloader(registry(null, sha(tokenizer))).build()))
                .isInstanceOf(DownloadException.class).hasMessageContaining("cannot be verified")
                .hasMessageContaining("--insecure-no-checksum");
        assertThat(dir.resolve("tiny/tiny.bin")).doesNotExist();
        ResolvedModel m = ensure(downloader(registry(null, sha(tokenizer))).allowUnverified(true).build());
        assertThat(m.files().getFirst().verification()).isEqualTo(Verification.NONE);
        assertThat(m.files().getFirst().sha256()).isEqualTo(sha(model));
    }

    @Test
    void anUnpinnedPlainUrlIsRefusedBeforeAnyRequest() {
        ModelRegistry r = new ModelRegistry(List.of(new ModelSpec("tiny", "x",
                new RemoteFile("tiny.bin", new RemoteFile.HuggingFace("org/repo", "main", "tiny.bin"), null),
                new RemoteFile("tok.bin", new RemoteFile.Url(URI.create(cdnUrl("/tok.bin"))), null))));
        assertThatThrownBy(() -> ensure(downloader(r).build()))
                .hasMessageContaining("tok.bin (" + cdnUrl("/tok.bin") + ") has no pinned SHA-256");
        assertThat(requests).isEmpty();
    }

    @Test
    void endpointAndTokenComeFromTheEnvironment() {
        ModelDownloader d = ModelDownloader.builder()
                .environment(Map.of("HF_ENDPOINT", "https://b.example", "PAGEWARDEN_HF_ENDPOINT", "http://mirror.local:9000/"))
                .build();
        assertThat(d.endpoint()).isEqualTo(URI.create("http://mirror.local:9000/"));
        assertThat(new RemoteFile.HuggingFace("karpathy/tinyllamas", "main", "stories15M.bin").uri(d.endpoint()))
                .isEqualTo(URI.create("http://mirror.local:9000/karpathy/tinyllamas/resolve/main/stories15M.bin"));
        assertThatThrownBy(() -> ModelDownloader.builder().environment(Map.of("PAGEWARDEN_HF_ENDPOINT", "ftp://x")))
                .hasMessageContaining("PAGEWARDEN_HF_ENDPOINT").hasMessageContaining("http(s) URL");
        assertThatThrownBy(() -> ModelRegistry.defaults().get("gpt5")).hasMessageContaining("unknown model 'gpt5'")
                .hasMessageContaining("stories260K");
    }

    @Test
    void sha256HeadersAreRecognisedOnlyWhenTheyAreSha256() {
        String h = "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696";
        assertThat(ModelDownloader.sha256Header("\"" + h.toUpperCase() + "\"")).isEqualTo(h);
        assertThat(ModelDownloader.sha256Header("W/\"" + h + "\"")).isEqualTo(h);
        assertThat(ModelDownloader.sha256Header("\"0123456789012345678901234567890123456789\"")).isNull();
        assertThat(ModelDownloader.sha256Header(null)).isNull();
    }
}
