package dev.pagewarden.core.tokenizer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Long and degenerate inputs (one huge word, long runs of spaces, newlines, digits and emoji)
 * finish in about linear time on the real Qwen3 vocabulary and round-trip exactly.
 */
class LongInputTest {
    static TextTokenizer qwen;

    @BeforeAll
    static void load() {
        LenmlOracle.require("LongInputTest");
        qwen = HfTokenizer.load(LenmlOracle.modelDir("qwen3")).build();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void degenerateInputsFinishAndRoundTrip() {
        for (String text : new String[]{
                "a".repeat(200_000),
                " ".repeat(200_000) + "x",
                "\n".repeat(100_000) + " \n".repeat(50_000),
                "1234567890".repeat(20_000),
                "🤖👨‍👩‍👧".repeat(20_000),
                "<|im_end|>".repeat(20_000)}) {
            int[] ids = qwen.encode(text, false);
            assertThat(qwen.decode(ids)).isEqualTo(text);
        }
    }
}
