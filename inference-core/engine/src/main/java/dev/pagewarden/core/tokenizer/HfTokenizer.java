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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Loads a Hugging Face BPE tokenizer: {@code tokenizer.json} (vocabulary, merges, added tokens,
 * normalizer, pre-tokenizer) and, when present, {@code tokenizer_config.json} beside it (BOS, EOS,
 * {@code add_bos_token}). Two kinds: byte-level BPE (GPT-2, Llama 3, Qwen) and SentencePiece
 * converted to BPE ({@code byte_fallback}, pieces spelled with {@code ▁}: Llama 2, Mistral,
 * TinyLlama), which becomes a {@code llama} (SentencePiece) tokenizer that merges by the file's merge
 * list. Added tokens marked special become control tokens, the others user-defined, as llama.cpp's
 * converter types them.
 */
public final class HfTokenizer {
    /** Plain maps, lists, strings, numbers; trailing text after the value is an error, as in any JSON file. */
    private static final ObjectMapper JSON = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();
    private static final String SPACE = "\u2581";
    private static final Pattern BYTE_PIECE = Pattern.compile("<0x[0-9A-F]{2}>");
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
                    + "; supported: BPE (byte-level, or SentencePiece-style with byte_fallback)");
        }
        boolean spm = Boolean.TRUE.equals(model.get("byte_fallback"));
        List<String> regexes = spm ? List.of() : preTokenizer(tok.get("pre_tokenizer"));
        boolean nfc = false;
        TokenizerSpec.Metaspace metaspace = null;
        boolean prepend = false;
        if (spm) {
            metaspace = metaspace(tok.get("pre_tokenizer"));
            prepend = spmNormalizer(tok.get("normalizer"), metaspace != null);
        } else if (tok.get("normalizer") instanceof Map<?, ?> n) {
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
            types[id] = spm && BYTE_PIECE.matcher(e.getKey()).matches() ? TokenType.BYTE : TokenType.NORMAL;
        }
        for (Object o : addedTokens) {
            Map<String, Object> a = (Map<String, Object>) o;
            int id = ((Number) a.get("id")).intValue();
            pieces[id] = (String) a.get("content");
            types[id] = Boolean.TRUE.equals(a.get("special")) ? TokenType.CONTROL : TokenType.USER_DEFINED;
        }
        if (spm && model.get("unk_token") instanceof String unk && vocab.get(unk) instanceof Number id) {
            types[id.intValue()] = TokenType.UNKNOWN; // as llama.cpp's converter types SentencePiece's <unk>
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
        if (spm) {
            boolean spacePrefix = metaspace == null ? prepend : metaspace.prepend() != TokenizerSpec.Metaspace.Prepend.NEVER;
            return new TokenizerSpec("llama", pieceList, types, scores(pieceList, types, merges), merges, List.of(),
                    bos, eos, -1, addBos, spacePrefix, false, false, metaspace);
        }
        return new TokenizerSpec("gpt2", pieceList, types, null, merges, regexes, bos, eos, -1, addBos, false,
                Boolean.TRUE.equals(model.get("ignore_merges")), nfc);
    }

    /**
     * SentencePiece scores for a GGUF file, which merges by score rather than by a merge list: a piece
     * some merge makes scores minus the rank of the first such merge, so scores give the merge
     * list's order; other normal pieces score below every merge (none makes them), the rest 0.
     */
    private static float[] scores(List<String> pieces, TokenType[] types, List<String> merges) {
        Map<String, Integer> ids = new HashMap<>();
        for (int id = 0; id < pieces.size(); id++) {
            ids.putIfAbsent(pieces.get(id), id);
        }
        float[] scores = new float[pieces.size()];
        boolean[] made = new boolean[pieces.size()];
        for (int r = 0; r < merges.size(); r++) {
            Integer id = ids.get(merges.get(r).replace(" ", ""));
            if (id != null && !made[id]) {
                made[id] = true;
                scores[id] = -r;
            }
        }
        for (int id = 0; id < scores.length; id++) {
            if (!made[id] && types[id] == TokenType.NORMAL) {
                scores[id] = -merges.size();
            }
        }
        return scores;
    }

    /**
     * A SentencePiece-converted tokenizer.json's normalizer: none (a Metaspace pre-tokenizer does the
     * work), or {@code Prepend("▁")} and {@code Replace(" ", "▁")} as Llama 2 ships it. Returns whether
     * text gets a ▁ in front.
     */
    @SuppressWarnings("unchecked")
    private static boolean spmNormalizer(Object normalizer, boolean metaspace) {
        if (normalizer == null) {
            if (!metaspace) {
                throw new IllegalArgumentException("a SentencePiece-style tokenizer (byte_fallback) needs a Replace(' ', '"
                        + SPACE + "') normalizer or a Metaspace pre-tokenizer; this one has neither");
            }
            return false;
        }
        Map<String, Object> n = (Map<String, Object>) normalizer;
        List<Object> steps = "Sequence".equals(n.get("type")) ? (List<Object>) n.get("normalizers") : List.of(n);
        boolean prepend = false;
        boolean replace = false;
        for (Object o : steps) {
            Map<String, Object> step = (Map<String, Object>) o;
            if ("Prepend".equals(step.get("type")) && SPACE.equals(step.get("prepend"))) {
                prepend = true;
            } else if ("Replace".equals(step.get("type")) && step.get("pattern") instanceof Map<?, ?> pattern
                    && " ".equals(pattern.get("String")) && SPACE.equals(step.get("content"))) {
                replace = true;
            } else {
                throw new IllegalArgumentException("normalizer step " + step + " is not supported for a SentencePiece-style "
                        + "tokenizer (supported: Prepend('" + SPACE + "'), Replace(' ', '" + SPACE + "'))");
            }
        }
        if (!replace && !metaspace) {
            throw new IllegalArgumentException("a SentencePiece-style tokenizer (byte_fallback) needs a Replace(' ', '"
                    + SPACE + "') normalizer or a Metaspace pre-tokenizer; this one has neither");
        }
        if (prepend && metaspace) {
            throw new IllegalArgumentException("a Prepend normalizer together with a Metaspace pre-tokenizer is not supported");
        }
        return prepend;
    }

    /** A SentencePiece-style pre-tokenizer: none, or {@code Metaspace} with replacement ▁. */
    @SuppressWarnings("unchecked")
    private static TokenizerSpec.Metaspace metaspace(Object pre) {
        if (pre == null) {
            return null;
        }
        Map<String, Object> p = (Map<String, Object>) pre;
        if (!"Metaspace".equals(p.get("type")) || !SPACE.equals(p.get("replacement"))) {
            throw new IllegalArgumentException("pre_tokenizer " + p + " is not supported for a SentencePiece-style "
                    + "tokenizer (supported: none, Metaspace with replacement '" + SPACE + "')");
        }
        // older files say add_prefix_space instead of prepend_scheme
        String scheme = p.get("prepend_scheme") instanceof String s ? s
                : Boolean.FALSE.equals(p.get("add_prefix_space")) ? "never" : "always";
        TokenizerSpec.Metaspace.Prepend prepend = switch (scheme) {
            case "first" -> TokenizerSpec.Metaspace.Prepend.FIRST;
            case "always" -> TokenizerSpec.Metaspace.Prepend.ALWAYS;
            case "never" -> TokenizerSpec.Metaspace.Prepend.NEVER;
            default -> throw new IllegalArgumentException("Metaspace prepend_scheme '" + scheme
                    + "' is not supported (supported: first, always, never)");
        };
        return new TokenizerSpec.Metaspace(prepend, !Boolean.FALSE.equals(p.get("split")));
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
                // Hugging Face's Digits: runs of digits (or each digit) cut out; SmolLM's tokenizer.json starts so
                case "Digits" -> regexes.add(Boolean.TRUE.equals(s.get("individual_digits")) ? "\\p{N}" : "\\p{N}+");
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
                        + "' is not supported (supported: Sequence, Split, Digits, ByteLevel)");
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
