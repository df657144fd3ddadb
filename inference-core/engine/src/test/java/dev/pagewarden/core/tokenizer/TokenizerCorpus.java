package dev.pagewarden.core.tokenizer;

import java.text.Normalizer;
import java.util.List;

/** Hard strings for tokenizer checks. NFC text (Qwen normalises to NFC, Llama 3 does not); {@link #decomposed} adds NFD. */
final class TokenizerCorpus {
    static final List<String> TEXTS = List.of(
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

    private TokenizerCorpus() {
    }

    /** The texts whose NFD form differs from their NFC form, in NFD. */
    static List<String> decomposed() {
        return TEXTS.stream().map(s -> Normalizer.normalize(s, Normalizer.Form.NFD))
                .filter(s -> !Normalizer.isNormalized(s, Normalizer.Form.NFC)).toList();
    }

    /** Every text joined, twenty times over: long input, word cache and queue sizes. */
    static String longText() {
        return String.join(" ", TEXTS).repeat(20);
    }
}
