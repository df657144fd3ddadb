package dev.pagewarden.core.download;

import dev.pagewarden.core.download.ResolvedModel.FileStatus;
import dev.pagewarden.core.download.ResolvedModel.Verification;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Hugging Face references against {@link FakeHub}: the expected hashes are the ones the fake Hub
 * lists (SHA-256 from the JDK, git blob ids checked against git itself below), and every file on
 * disk must equal the bytes the fake Hub holds.
 */
class HubDownloadTest {
    private static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";

    @TempDir
    Path dir;
    private FakeHub hub;
    private final List<String> messages = Collections.synchronizedList(new ArrayList<>());
    private final List<long[]> progress = Collections.synchronizedList(new ArrayList<>());

    private final byte[] q4 = bytes(400_000, 1);
    private final byte[] q6 = bytes(500_000, 2);
    private final byte[] shard1 = bytes(300_000, 3);
    private final byte[] shard2 = bytes(200_000, 4);
    private final byte[] consolidated = bytes(100_000, 5);
    private final byte[] tokenizerJson = bytes(50_000, 6);
    private static final String CONFIG = "{\"architectures\":[\"Qwen3ForCausalLM\"],\"hidden_size\":64}\n";
    private static final String INDEX = "{\"metadata\":{\"total_size\":500000},\"weight_map\":{"
            + "\"model.embed_tokens.weight\":\"model-00001-of-00002.safetensors\","
            + "\"model.layers.0.mlp.up_proj.weight\":\"model-00002-of-00002.safetensors\","
            + "\"lm_head.weight\":\"model-00002-of-00002.safetensors\"}}";

    @BeforeEach
    void start() throws IOException {
        hub = new FakeHub();
        hub.file("bartowski/Tiny-GGUF", "main", "Tiny-Q4_K_M.gguf", q4, true)
                .file("bartowski/Tiny-GGUF", "main", "Tiny-Q6_K.gguf", q6, true)
                .file("bartowski/Tiny-GGUF", "main", "README.md", "# Tiny\n", false)
                .file("bartowski/Tiny-GGUF", COMMIT, "Tiny-Q4_K_M.gguf", q6, true);
        String qwen = "Qwen/Qwen3-Tiny";
        hub.file(qwen, "main", "config.json", CONFIG, false)
                .file(qwen, "main", "model.safetensors.index.json", INDEX, false)
                .file(qwen, "main", "model-00001-of-00002.safetensors", shard1, true)
                .file(qwen, "main", "model-00002-of-00002.safetensors", shard2, true)
                .file(qwen, "main", "consolidated.safetensors", consolidated, true)
                .file(qwen, "main", "tokenizer.json", tokenizerJson, true)
                .file(qwen, "main", "tokenizer_config.json", "{\"chat_template\":\"{{ x }}\"}", false)
                .file(qwen, "main", "generation_config.json", "{\"eos_token_id\":151645}", false)
                .file(qwen, "main", "README.md", "# Qwen3 tiny\n", false)
                .file(qwen, "main", "onnx/model.onnx", bytes(1000, 7), true);
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private ModelDownloader.Builder downloader() {
        return ModelDownloader.builder().endpoint(hub.endpoint()).retryBackoff(Duration.ZERO).timeout(Duration.ofSeconds(10));
    }

    private ResolvedModel ensure(ModelDownloader d, String reference) throws Exception {
        return d.ensure(reference, dir, new ProgressListener() {
            @Override
            public void progress(String file, long done, long total) {
                progress.add(new long[]{done, total});
            }

            @Override
            public void message(String line) {
                messages.add(line);
            }
        });
    }

    private List<String> filesIn(Path folder) throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void gitBlobIdsOfTheFakeHubAreGitsOwn() throws Exception {
        // Well-known ids: the empty blob and "hello\n".
        assertThat(FakeHub.gitBlobSha1(new byte[0])).isEqualTo("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assertThat(FakeHub.gitBlobSha1("hello\n".getBytes(StandardCharsets.US_ASCII)))
                .isEqualTo("ce013625030ba8dba906f756967f9e9ca394464a");
        Path f = dir.resolve("config.json");
        Files.writeString(f, CONFIG);
        assertThat(ModelDownloader.gitBlobSha1Of(f)).isEqualTo(gitHashObject(f));
        assertThat(FakeHub.gitBlobSha1(CONFIG.getBytes(StandardCharsets.UTF_8))).isEqualTo(gitHashObject(f));
    }

    /** {@code git hash-object FILE}, the reference for blob ids; skipped where git is not installed. */
    private static String gitHashObject(Path f) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder("git", "hash-object", f.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            assumeTrue(false, "git is not installed");
            return null;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    @Test
    void oneGgufFileIsFetchedFromTheCdnAndVerifiedByTheListedSha256() throws Exception {
        ResolvedModel m = ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        Path folder = dir.resolve("bartowski/Tiny-GGUF");
        assertThat(m.name()).isEqualTo("Tiny-Q4_K_M");
        assertThat(m.model()).isEqualTo(folder.resolve("Tiny-Q4_K_M.gguf")).hasBinaryContent(q4);
        assertThat(m.tokenizer()).isNull();
        assertThat(m.files()).singleElement().satisfies(f -> {
            assertThat(f.verification()).isEqualTo(Verification.LISTED);
            assertThat(f.sha256()).isEqualTo(FakeHub.sha256(q4));
            assertThat(f.downloaded()).isTrue();
        });
        assertThat(hub.requests("hub")).extracting(FakeHub.Requested::path)
                .containsExactly("/api/models/bartowski/Tiny-GGUF/tree/main", "/bartowski/Tiny-GGUF/resolve/main/Tiny-Q4_K_M.gguf");
        assertThat(hub.requests("cdn")).singleElement().extracting(FakeHub.Requested::path).asString().endsWith("Tiny-Q4_K_M.gguf");
        assertThat(filesIn(folder)).doesNotContain("Tiny-Q6_K.gguf", "README.md", "Tiny-Q4_K_M.gguf.part");
        assertThat(progress).isNotEmpty().allMatch(p -> p[1] == q4.length && p[0] <= q4.length);
        assertThat(progress.getLast()[0]).isEqualTo(q4.length);

        // A second run re-hashes the file on disk against the listing and fetches nothing.
        int before = hub.requests.size();
        ResolvedModel again = ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        assertThat(again.files().getFirst().downloaded()).isFalse();
        assertThat(again.files().getFirst().verification()).isEqualTo(Verification.LISTED);
        assertThat(hub.requests.subList(before, hub.requests.size())).extracting(FakeHub.Requested::path)
                .containsExactly("/api/models/bartowski/Tiny-GGUF/tree/main");
    }

    @Test
    void aShardedSafetensorsRepositoryBringsWhatTheIndexNamesAndTheTokenizerFiles() throws Exception {
        hub.pageSize = 3;
        ResolvedModel m = ensure(downloader().build(), "Qwen/Qwen3-Tiny");
        Path folder = dir.resolve("Qwen/Qwen3-Tiny");
        assertThat(m.name()).isEqualTo("Qwen3-Tiny");
        assertThat(m.model()).isEqualTo(folder);
        assertThat(m.files()).extracting(f -> f.path().getFileName().toString()).containsExactly("config.json",
                "model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                "tokenizer.json", "tokenizer_config.json", "generation_config.json");
        assertThat(m.files()).allMatch(f -> f.verification() == Verification.LISTED && f.downloaded());
        assertThat(folder.resolve("config.json")).hasContent(CONFIG);
        assertThat(folder.resolve("model.safetensors.index.json")).hasContent(INDEX);
        assertThat(folder.resolve("model-00001-of-00002.safetensors")).hasBinaryContent(shard1);
        assertThat(folder.resolve("model-00002-of-00002.safetensors")).hasBinaryContent(shard2);
        assertThat(folder.resolve("tokenizer.json")).hasBinaryContent(tokenizerJson);
        assertThat(folder.resolve("tokenizer_config.json")).hasContent("{\"chat_template\":\"{{ x }}\"}");
        // The index does not name consolidated.safetensors: it is not what transformers loads, and not fetched.
        assertThat(filesIn(folder)).doesNotContain("consolidated.safetensors", "README.md", "onnx").noneMatch(n -> n.endsWith(".part"));
        assertThat(hub.requests).noneMatch(r -> r.path().contains("consolidated") || r.path().contains("onnx"));
        assertThat(hub.requests("hub").stream().filter(r -> r.path().startsWith("/api/")).count()).as("paginated listing")
                .isGreaterThan(1);
        // Each sidecar records the SHA-256 the JDK computes of the Hub's bytes.
        assertThat(folder.resolve("config.json.sha256")).hasContent(FakeHub.sha256(CONFIG.getBytes(StandardCharsets.UTF_8))
                + "  config.json");
    }

    @Test
    void aRepositoryWithOneSafetensorsFileNeedsNoIndex() throws Exception {
        byte[] w = bytes(70_000, 9);
        hub.file("org/single", "main", "config.json", CONFIG, false).file("org/single", "main", "model.safetensors", w, true);
        ResolvedModel m = ensure(downloader().build(), "org/single");
        assertThat(m.files()).extracting(f -> f.path().getFileName().toString()).containsExactly("config.json", "model.safetensors");
        assertThat(m.model().resolve("model.safetensors")).hasBinaryContent(w);
    }

    @Test
    void anInterruptedTransferIsResumedWithARangeRequestByTheNextRun() throws Exception {
        hub.cutFirst.add("Tiny-Q4_K_M.gguf");
        assertThatThrownBy(() -> ensure(downloader().maxAttempts(1).build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("Tiny-Q4_K_M.gguf")
                .hasMessageContaining("next run resumes it");
        Path part = dir.resolve("bartowski/Tiny-GGUF/Tiny-Q4_K_M.gguf.part");
        long kept = Files.size(part);
        assertThat(kept).isPositive().isLessThanOrEqualTo(q4.length / 2);

        ResolvedModel m = ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        assertThat(m.model()).hasBinaryContent(q4);
        assertThat(hub.requests("cdn")).extracting(FakeHub.Requested::range).containsExactly(null, "bytes=" + kept + "-");
        assertThat(messages).anyMatch(s -> s.contains("resuming at " + kept + " bytes"));
        assertThat(part).doesNotExist();
    }

    @Test
    void aStalledTransferIsCutByTheTimeoutAndResumed() throws Exception {
        hub.stallFirst.add("model-00001-of-00002.safetensors");
        hub.stallMillis = 5000;
        long t0 = System.nanoTime();
        ResolvedModel m = ensure(downloader().timeout(Duration.ofMillis(500)).build(), "Qwen/Qwen3-Tiny");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(4500));
        assertThat(m.model().resolve("model-00001-of-00002.safetensors")).hasBinaryContent(shard1);
        assertThat(messages).anyMatch(s -> s.contains("no data for 500 ms"));
        List<String> ranges = hub.requests("cdn").stream().filter(r -> r.path().endsWith("00001-of-00002.safetensors"))
                .map(FakeHub.Requested::range).toList();
        assertThat(ranges).hasSize(2);
        assertThat(ranges.get(1)).startsWith("bytes=");
    }

    @Test
    void anLfsFileThatFailsItsListedSha256IsDeletedAndBothDigestsAreNamed() throws Exception {
        hub.corrupt.add("Tiny-Q4_K_M.gguf");
        byte[] served = q4.clone();
        served[served.length / 3] ^= 0x20;
        assertThatThrownBy(() -> ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf"))
                .isInstanceOf(DownloadException.class)
                .hasMessageContaining("Tiny-Q4_K_M.gguf: SHA-256 mismatch")
                .hasMessageContaining("expected " + FakeHub.sha256(q4) + " (listed by the Hub for bartowski/Tiny-GGUF@main)")
                .hasMessageContaining("got " + FakeHub.sha256(served))
                .hasMessageContaining("deleted");
        assertThat(filesIn(dir.resolve("bartowski/Tiny-GGUF"))).isEmpty();
    }

    @Test
    void aSmallFileThatFailsItsGitBlobSha1IsDeletedAndBothDigestsAreNamed() throws Exception {
        hub.corrupt.add("config.json");
        byte[] good = CONFIG.getBytes(StandardCharsets.UTF_8);
        byte[] served = good.clone();
        served[served.length / 3] ^= 0x20;
        assertThatThrownBy(() -> ensure(downloader().build(), "Qwen/Qwen3-Tiny"))
                .isInstanceOf(DownloadException.class)
                .hasMessageContaining("config.json: git blob SHA-1 mismatch")
                .hasMessageContaining("expected " + FakeHub.gitBlobSha1(good))
                .hasMessageContaining("got " + FakeHub.gitBlobSha1(served))
                .hasMessageContaining("deleted");
        assertThat(dir.resolve("Qwen/Qwen3-Tiny/config.json")).doesNotExist();
        assertThat(dir.resolve("Qwen/Qwen3-Tiny/config.json.part")).doesNotExist();
    }

    @Test
    void aChangedFileOnDiskIsFetchedAgain() throws Exception {
        ResolvedModel first = ensure(downloader().build(), "Qwen/Qwen3-Tiny");
        Path config = first.model().resolve("config.json");
        Files.writeString(config, "{\"hidden_size\":65}");
        ResolvedModel again = ensure(downloader().build(), "Qwen/Qwen3-Tiny");
        assertThat(config).hasContent(CONFIG);
        assertThat(again.files().getFirst().downloaded()).isTrue();
        assertThat(again.files().subList(1, again.files().size())).noneMatch(FileStatus::downloaded);
        assertThat(messages).anyMatch(s -> s.contains("config.json: present but its git blob SHA-1 is"));
    }

    @Test
    void aPinnedRevisionFetchesThatCommitsFiles() throws Exception {
        ResolvedModel m = ensure(downloader().build(), "bartowski/Tiny-GGUF@" + COMMIT + ":Tiny-Q4_K_M.gguf");
        assertThat(m.model()).hasBinaryContent(q6);
        assertThat(hub.requests("hub")).extracting(FakeHub.Requested::path).containsExactly(
                "/api/models/bartowski/Tiny-GGUF/tree/" + COMMIT, "/bartowski/Tiny-GGUF/resolve/" + COMMIT + "/Tiny-Q4_K_M.gguf");
        // The commit's content cannot change: the next run checks the recorded SHA-256 and asks the Hub nothing.
        int before = hub.requests.size();
        ResolvedModel again = ensure(downloader().build(), "bartowski/Tiny-GGUF@" + COMMIT + ":Tiny-Q4_K_M.gguf");
        assertThat(again.files().getFirst().verification()).isEqualTo(Verification.RECORDED);
        assertThat(again.model()).hasBinaryContent(q6);
        assertThat(hub.requests).hasSize(before);
        // Back on main, the file on disk no longer matches the listing and is replaced.
        ResolvedModel main = ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        assertThat(main.model()).hasBinaryContent(q4);
        assertThat(main.files().getFirst().downloaded()).isTrue();
    }

    @Test
    void missingRepositoryRevisionAndFileAreNamed() {
        assertThatThrownBy(() -> ensure(downloader().build(), "nobody/nothing:x.gguf"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("repository nobody/nothing not found (HTTP 401")
                .hasMessageContaining("set HF_TOKEN");
        assertThatThrownBy(() -> ensure(downloader().build(), "bartowski/Tiny-GGUF@v9:Tiny-Q4_K_M.gguf"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("revision 'v9' not found in bartowski/Tiny-GGUF");
        assertThatThrownBy(() -> ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q5_K_M.gguf"))
                .isInstanceOf(DownloadException.class)
                .hasMessageContaining("bartowski/Tiny-GGUF has no file 'Tiny-Q5_K_M.gguf' at revision main")
                .hasMessageContaining("its GGUF files: Tiny-Q4_K_M.gguf, Tiny-Q6_K.gguf");
        assertThatThrownBy(() -> ensure(downloader().build(), "bartowski/Tiny-GGUF"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("is no safetensors model")
                .hasMessageContaining("bartowski/Tiny-GGUF:FILE.gguf").hasMessageContaining("Tiny-Q6_K.gguf");
        assertThat(dir.resolve("nobody")).doesNotExist();
    }

    @Test
    void anIndexNamingAShardTheRepositoryLacksIsRefused() throws Exception {
        hub.file("org/broken", "main", "config.json", CONFIG, false)
                .file("org/broken", "main", "model.safetensors.index.json", INDEX, false)
                .file("org/broken", "main", "model-00001-of-00002.safetensors", shard1, true);
        assertThatThrownBy(() -> ensure(downloader().build(), "org/broken"))
                .isInstanceOf(DownloadException.class)
                .hasMessageContaining("names shard 'model-00002-of-00002.safetensors', which the repository does not list");
    }

    @Test
    void aGatedRepositoryAsksForATokenAndTheTokenNeverReachesTheCdn() throws Exception {
        hub.requiredToken = "hf_good";
        assertThatThrownBy(() -> ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("bartowski/Tiny-GGUF is gated (HTTP 401")
                .hasMessageContaining("set HF_TOKEN");
        assertThatThrownBy(() -> ensure(downloader().token("hf_bad").build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("HTTP 403")
                .hasMessageContaining("the token in HF_TOKEN has no access");
        ResolvedModel m = ensure(downloader().token("hf_good").build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        assertThat(m.model()).hasBinaryContent(q4);
        assertThat(hub.requests("cdn")).isNotEmpty().extracting(FakeHub.Requested::authorization).containsOnlyNulls();
    }

    @Test
    void withoutTheHubTheFilesVerifiedBeforeAreUsed() throws Exception {
        ensure(downloader().build(), "Qwen/Qwen3-Tiny");
        ensure(downloader().build(), "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        java.net.URI gone = hub.endpoint();
        hub.close();
        ModelDownloader offline = ModelDownloader.builder().endpoint(gone).retryBackoff(Duration.ZERO).maxAttempts(1)
                .timeout(Duration.ofSeconds(2)).build();
        ResolvedModel folder = ensure(offline, "Qwen/Qwen3-Tiny");
        assertThat(folder.model()).isEqualTo(dir.resolve("Qwen/Qwen3-Tiny"));
        assertThat(folder.files()).hasSize(7).allMatch(f -> f.verification() == Verification.RECORDED && !f.downloaded());
        ResolvedModel gguf = ensure(offline, "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf");
        assertThat(gguf.model()).hasBinaryContent(q4);
        assertThat(messages).anyMatch(s -> s.contains("the Hub cannot be reached"));

        // A damaged file is not served from disk without the Hub to fetch it again.
        Files.write(dir.resolve("bartowski/Tiny-GGUF/Tiny-Q4_K_M.gguf"), q6);
        assertThatThrownBy(() -> ensure(offline, "bartowski/Tiny-GGUF:Tiny-Q4_K_M.gguf"))
                .isInstanceOf(DownloadException.class).hasMessageContaining("cannot list the repository's files");
        // Nor is another revision than the one recorded.
        assertThatThrownBy(() -> ensure(offline, "Qwen/Qwen3-Tiny@" + COMMIT)).isInstanceOf(DownloadException.class);
    }

    @Test
    void referencesParseAndBadOnesAreNamed() {
        HubReference one = HubReference.parse("bartowski/Llama-3.2-1B-Instruct-GGUF:Llama-3.2-1B-Instruct-Q4_K_M.gguf");
        assertThat(one).isEqualTo(new HubReference("bartowski/Llama-3.2-1B-Instruct-GGUF", "main",
                "Llama-3.2-1B-Instruct-Q4_K_M.gguf"));
        assertThat(one.id()).isEqualTo("Llama-3.2-1B-Instruct-Q4_K_M");
        assertThat(one.pinned()).isFalse();
        HubReference repo = HubReference.parse("Qwen/Qwen3-0.6B@" + COMMIT);
        assertThat(repo.file()).isNull();
        assertThat(repo.revision()).isEqualTo(COMMIT);
        assertThat(repo.pinned()).isTrue();
        assertThat(repo.id()).isEqualTo("Qwen3-0.6B");
        assertThat(repo.folder(dir)).isEqualTo(dir.resolve("Qwen").resolve("Qwen3-0.6B"));
        assertThat(HubReference.parse("org/r@" + COMMIT + ":sub/m.Q8_0.gguf").fileName()).isEqualTo("m.Q8_0.gguf");
        assertThat(HubReference.parse("org/r@" + COMMIT + ":sub/m.Q8_0.gguf").id()).isEqualTo("m.Q8_0");
        assertThat(HubReference.looksLike("stories260K")).isFalse();
        assertThat(HubReference.looksLike("Qwen/Qwen3-0.6B")).isTrue();

        assertThatThrownBy(() -> HubReference.parse("org/repo:")).hasMessageContaining("names no file");
        assertThatThrownBy(() -> HubReference.parse("org/a/b")).hasMessageContaining("bad Hugging Face repository 'org/a/b'");
        assertThatThrownBy(() -> HubReference.parse("org/../x")).hasMessageContaining("bad Hugging Face repository");
        assertThatThrownBy(() -> HubReference.parse("org/repo@:f.gguf")).hasMessageContaining("bad revision ''");
        assertThatThrownBy(() -> HubReference.parse("org/repo@a b:f.gguf")).hasMessageContaining("bad revision 'a b'");
        assertThatThrownBy(() -> HubReference.parse("org/repo:../../etc/passwd")).hasMessageContaining("bad file '../../etc/passwd'");
        assertThatThrownBy(() -> HubReference.parse("org/repo:a/.hidden")).hasMessageContaining("bad file");
    }

    @Test
    void theRegistryFormsStillWork() {
        assertThatThrownBy(() -> ensure(downloader().build(), "gpt5")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown model 'gpt5'");
    }
}
