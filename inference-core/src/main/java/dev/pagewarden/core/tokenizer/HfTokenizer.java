package dev.pagewarden.core.tokenizer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import dev.pagewarden.core.model.ModelFormatException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Loads a Hugging Face byte-level BPE tokenizer: {@code tokenizer.json} (vocabulary, merges, added
 * tokens, normalizer, pre-tokenizer) and, when present, {@code tokenizer_config.json} beside it (BOS,
 * EOS, {@code add_bos_token}). Added tokens marked special become control tokens, the others
 * user-defined, as llama.cpp's converter types them.
 */
public final class HfTokenizer {
    /** Plain maps, lists, strings, numbers; trailing text after the value is an error, as in any JSON file. */
    private static final ObjectMapper JSON = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();
    private HfTokenizer() {
    }

    /** From a folder holding {@code tokenizer.json} (and maybe {@code tokenizer_config.json}), or that file itself. */
    public static TokenizerSpec load(Path path) {
        Path json = Files.isDirectory(path) ? path.resolve("tokenizer.json") : path;
        Path config = json.resolveSibling("tokenizer_config.json");
        return load(json, Files.isRegularFile(config) ? config : null);
    }

    public static TokenizerSpec load(Path tokenizerJson, Path tokenizerConfig) {
        Map<String, Object> tok = object(read(tokenizerJson), tokenizerJson, "the top level");
        Map<String, Object> cfg = tokenizerConfig == null ? Map.of()
                : object(read(tokenizerConfig), tokenizerConfig, "the top level");
        try {
            return spec(tok, cfg);
        } catch (IllegalArgumentException | ClassCastException e) {
            throw new ModelFormatException(tokenizerJson + ": " + e.getMessage(), e);
        }
    }

    private static Object read(Path file) {
        try {
            return JSON.readValue(file.toFile(), Object.class);
        } catch (JsonProcessingException e) {
            throw new ModelFormatException(file + ": not JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read: " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object v, Path file, String where) {
        if (v instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new ModelFormatException(file + ": " + where + " is not a JSON object");
    }

    @SuppressWarnings("unchecked")
    private static TokenizerSpec spec(Map<String, Object> tok, Map<String, Object> cfg) {
        Map<String, Object> model = (Map<String, Object>) tok.get("model");
        if (model == null || !"BPE".equals(model.get("type"))) {
            throw new IllegalArgumentException("model.type is " + (model == null ? "missing" : "'" + model.get("type") + "'")
                    + "; supported: BPE (byte-level)");
        }
        if (Boolean.TRUE.equals(model.get("byte_fallback"))) {
            throw new IllegalArgumentException("a SentencePiece-style BPE (byte_fallback, as Llama 2 and Mistral ship) "
                    + "is not supported from tokenizer.json; use the model's GGUF file");
        }
        List<String> regexes = preTokenizer(tok.get("pre_tokenizer"));
        Object normalizer = tok.get("normalizer");
        boolean nfc = false;
        if (normalizer instanceof Map<?, ?> n) {
            if (!"NFC".equals(n.get("type"))) {
                throw new IllegalArgumentException("normalizer '" + n.get("type") + "' is not supported (supported: none, NFC)");
            }
            nfc = true;
        }
        Map<String, Object> vocab = (Map<String, Object>) model.get("vocab");
        List<Object> addedTokens = (List<Object>) tok.getOrDefault("added_tokens", List.of());
        int size = 0;
        for (Object id : vocab.values()) {
            size = Math.max(size, ((Number) id).intValue() + 1);
        }
        for (Object a : addedTokens) {
            size = Math.max(size, ((Number) ((Map<String, Object>) a).get("id")).intValue() + 1);
        }
        String[] pieces = new String[size];
        TokenType[] types = new TokenType[size];
        for (Map.Entry<String, Object> e : vocab.entrySet()) {
            int id = ((Number) e.getValue()).intValue();
            pieces[id] = e.getKey();
            types[id] = TokenType.NORMAL;
        }
        for (Object o : addedTokens) {
            Map<String, Object> a = (Map<String, Object>) o;
            int id = ((Number) a.get("id")).intValue();
            pieces[id] = (String) a.get("content");
            types[id] = Boolean.TRUE.equals(a.get("special")) ? TokenType.CONTROL : TokenType.USER_DEFINED;
        }
        for (int id = 0; id < size; id++) {
            if (pieces[id] == null) { // a gap in the ids: a placeholder no text can produce
                pieces[id] = "";
                types[id] = TokenType.UNUSED;
            }
        }
        List<String> merges = new ArrayList<>();
        for (Object m : (List<Object>) model.get("merges")) {
            merges.add(m instanceof List<?> pair ? pair.get(0) + " " + pair.get(1) : (String) m);
        }
        List<String> pieceList = Arrays.asList(pieces);
        int bos = specialId(cfg.get("bos_token"), pieceList, "bos_token");
        int eos = specialId(cfg.get("eos_token"), pieceList, "eos_token");
        boolean addBos = cfg.get("add_bos_token") instanceof Boolean b ? b
                : bos >= 0 && tok.get("post_processor") instanceof Map<?, ?> pp && "TemplateProcessing".equals(pp.get("type"))
                  && String.valueOf(pp.get("single")).contains(pieces[bos]);
        return new TokenizerSpec("gpt2", pieceList, types, null, merges, regexes, bos, eos, -1, addBos, false,
                Boolean.TRUE.equals(model.get("ignore_merges")), nfc);
    }

    /** The split regexes of a ByteLevel pre-tokenizer setup. */
    @SuppressWarnings("unchecked")
    private static List<String> preTokenizer(Object pre) {
        if (!(pre instanceof Map<?, ?>)) {
            throw new IllegalArgumentException("pre_tokenizer is missing; a byte-level BPE tokenizer needs one");
        }
        Map<String, Object> p = (Map<String, Object>) pre;
        List<Object> steps = "Sequence".equals(p.get("type")) ? (List<Object>) p.get("pretokenizers") : List.of(p);
        List<String> regexes = new ArrayList<>();
        boolean byteLevel = false;
        for (Object o : steps) {
            Map<String, Object> s = (Map<String, Object>) o;
            switch (String.valueOf(s.get("type"))) {
                case "Split" -> {
                    Map<String, Object> pattern = (Map<String, Object>) s.get("pattern");
                    if (!"Isolated".equals(s.get("behavior")) || Boolean.TRUE.equals(s.get("invert"))
                            || pattern == null || !(pattern.get("Regex") instanceof String regex)) {
                        throw new IllegalArgumentException("pre_tokenizer Split " + s
                                + " is not supported (supported: a Regex pattern, behavior Isolated, not inverted)");
                    }
                    regexes.add(regex);
                }
                case "ByteLevel" -> {
                    byteLevel = true;
                    if (!Boolean.FALSE.equals(s.get("use_regex"))) {
                        regexes.add(PreTokenizer.GPT2);
                    }
                    if (Boolean.TRUE.equals(s.get("add_prefix_space"))) {
                        throw new IllegalArgumentException("pre_tokenizer ByteLevel with add_prefix_space is not supported");
                    }
                }
                default -> throw new IllegalArgumentException("pre_tokenizer '" + s.get("type")
                        + "' is not supported (supported: Sequence, Split, ByteLevel)");
            }
        }
        if (!byteLevel) {
            throw new IllegalArgumentException("pre_tokenizer has no ByteLevel step; only byte-level BPE is supported");
        }
        return regexes;
    }

    /** A config's special token, written as a string or as {@code {"content": ...}}; -1 when null or absent. */
    private static int specialId(Object value, List<String> pieces, String key) {
        if (value instanceof Map<?, ?> m) {
            value = m.get("content");
        }
        if (value == null) {
            return -1;
        }
        int id = pieces.indexOf((String) value);
        if (id < 0) {
            throw new IllegalArgumentException("tokenizer_config.json " + key + " '" + value + "' is not in the vocabulary");
        }
        return id;
    }
}
