package dev.pagewarden.core.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A small byte-level BPE tokenizer in Hugging Face's files, for models too small for a real vocabulary:
 * Qwen 2's pre-tokenizer, the 256 byte symbols of GPT-2's byte-to-unicode table, merges of lowercase letter pairs (and of a
 * space with a letter), then two special tokens, {@code <|endoftext|>} (EOS) and {@code <|im_end|>}.
 */
public final class TinyBpeTokenizer {
    /** The split regex of Qwen 2's published tokenizer.json. */
    private static final String QWEN2_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    public static final int SIZE = 512;
    public static final int END_OF_TEXT = SIZE - 2;
    public static final int IM_END = SIZE - 1;

    private TinyBpeTokenizer() {
    }

    /** Writes {@code tokenizer.json} and {@code tokenizer_config.json} (with a small chat template) into {@code dir}. */
    public static Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        ObjectMapper json = new ObjectMapper();
        ObjectNode tok = json.createObjectNode();
        tok.put("version", "1.0");
        ArrayNode added = tok.putArray("added_tokens");
        added.addObject().put("id", END_OF_TEXT).put("content", "<|endoftext|>").put("special", true);
        added.addObject().put("id", IM_END).put("content", "<|im_end|>").put("special", true);
        tok.putNull("normalizer");
        // Qwen 2's pre-tokenizer, which GGUF names (qwen2)
        ObjectNode pre = tok.putObject("pre_tokenizer");
        pre.put("type", "Sequence");
        ArrayNode steps = pre.putArray("pretokenizers");
        ObjectNode split = steps.addObject();
        split.put("type", "Split").putObject("pattern").put("Regex", QWEN2_SPLIT);
        split.put("behavior", "Isolated").put("invert", false);
        steps.addObject().put("type", "ByteLevel").put("add_prefix_space", false).put("trim_offsets", false)
                .put("use_regex", false);
        tok.putObject("decoder").put("type", "ByteLevel");
        ObjectNode model = tok.putObject("model");
        model.put("type", "BPE");
        ObjectNode vocab = model.putObject("vocab");
        ArrayNode merges = model.putArray("merges");
        char[] symbols = byteSymbols();
        int id = 0;
        for (char c : symbols) {
            vocab.put(String.valueOf(c), id++);
        }
        String space = String.valueOf(symbols[' ']);
        java.util.List<String[]> pairs = new java.util.ArrayList<>();
        for (char a = 'a'; a <= 'z'; a++) {
            pairs.add(new String[]{space, String.valueOf(a)});
        }
        for (char a = 'a'; a <= 'z'; a++) {
            for (char b = 'a'; b <= 'z'; b++) {
                pairs.add(new String[]{String.valueOf(a), String.valueOf(b)});
            }
        }
        for (int i = 0; id < END_OF_TEXT; i++) {
            vocab.put(pairs.get(i)[0] + pairs.get(i)[1], id++);
            merges.add(pairs.get(i)[0] + " " + pairs.get(i)[1]);
        }
        Files.writeString(dir.resolve("tokenizer.json"), tok.toPrettyString());
        ObjectNode cfg = json.createObjectNode();
        cfg.put("add_bos_token", false);
        cfg.putNull("bos_token");
        cfg.put("eos_token", "<|endoftext|>");
        cfg.put("pad_token", "<|endoftext|>");
        cfg.put("chat_template", "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}<|im_end|>\n{% endfor %}"
                + "{% if add_generation_prompt %}assistant: {% endif %}");
        Files.writeString(dir.resolve("tokenizer_config.json"), cfg.toPrettyString());
        return dir;
    }

    /** GPT-2's byte-to-unicode table: printable bytes stand for themselves, the rest for 256 + n. */
    private static char[] byteSymbols() {
        char[] out = new char[256];
        int n = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            out[b] = printable ? (char) b : (char) (256 + n++);
        }
        return out;
    }
}
