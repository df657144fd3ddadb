package dev.pagewarden.core.download;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One folder of a Hub repository at a revision, as {@code GET /api/models/{repo}/tree/{revision}[/{folder}]}
 * lists it: for each file its path, size and git blob id, and for files kept in LFS their SHA-256.
 */
record HubTree(HubReference ref, List<Entry> entries) {
    /** Files a Hugging Face model folder is made of besides the weights; all but config.json optional. */
    static final List<String> FOLDER_EXTRAS = List.of("tokenizer.json", "tokenizer_config.json", "generation_config.json");
    static final String CONFIG = "config.json";
    static final String SINGLE_WEIGHTS = "model.safetensors";
    static final String INDEX = "model.safetensors.index.json";

    /**
     * @param path      repository path
     * @param size      bytes of the file itself (for LFS files, of the content, not of the pointer)
     * @param gitOid    git blob SHA-1 (for LFS files, the pointer's, so not a hash of the content)
     * @param lfsSha256 SHA-256 of an LFS file's content; null for files kept in git
     */
    record Entry(String path, long size, String gitOid, String lfsSha256) {
        String name() {
            return path.substring(path.lastIndexOf('/') + 1);
        }

        /** The file to fetch: LFS content by its SHA-256, a git file by its blob hash. */
        RemoteFile remote(HubReference ref) {
            RemoteFile.HuggingFace src = new RemoteFile.HuggingFace(ref.repo(), ref.revision(), path);
            return lfsSha256 != null ? new RemoteFile(name(), src, lfsSha256, null, size, true)
                    : new RemoteFile(name(), src, null, gitOid, size, true);
        }
    }

    /** Integers as {@link Long} (sizes), other numbers as Double; trailing text after the value is an error. */
    private static final ObjectMapper JSON = JsonMapper.builder().enable(DeserializationFeature.USE_LONG_FOR_INTS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();

    /** One JSON value as maps, lists, strings, numbers; malformed input is an IllegalArgumentException saying where. */
    private static Object parse(String json) {
        try {
            return JSON.readValue(json, Object.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage() + " at " + e.getLocation());
        }
    }

    /** Parses one page of the listing; directories are skipped. Anything unexpected is an error naming the field. */
    static List<Entry> parsePage(String json, String what) {
        Object v;
        try {
            v = parse(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": " + e.getMessage());
        }
        if (!(v instanceof List<?> items)) {
            throw new IllegalArgumentException(what + ": expected a JSON array of files");
        }
        List<Entry> out = new ArrayList<>();
        for (Object o : items) {
            if (!(o instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(what + ": an entry is not a JSON object");
            }
            if (!"file".equals(m.get("type"))) {
                continue;
            }
            String path = string(m, "path", what);
            long size = number(m, "size", what + " " + path);
            String oid = string(m, "oid", what + " " + path);
            String sha = null;
            if (m.get("lfs") instanceof Map<?, ?> lfs) {
                sha = string(lfs, "oid", what + " " + path + " lfs");
                if (lfs.get("size") instanceof Long s) {
                    size = s;
                }
            }
            out.add(new Entry(path, size, oid, sha));
        }
        return out;
    }

    Entry find(String path) {
        for (Entry e : entries) {
            if (e.path().equals(path)) {
                return e;
            }
        }
        return null;
    }

    /** Names of the listed files ending in {@code suffix}, for "did you mean" messages. */
    String namesEnding(String suffix) {
        Set<String> s = new TreeSet<>();
        for (Entry e : entries) {
            if (e.path().endsWith(suffix)) {
                s.add(e.path());
            }
        }
        return s.isEmpty() ? "none" : String.join(", ", s);
    }

    /** The shard names a {@code model.safetensors.index.json} maps tensors to, in order, each once. */
    static List<String> shardsOf(String indexJson) {
        Object v = parse(indexJson);
        if (!(v instanceof Map<?, ?> m) || !(m.get("weight_map") instanceof Map<?, ?> map) || map.isEmpty()) {
            throw new IllegalArgumentException(INDEX + " has no weight_map object");
        }
        Set<String> shards = new TreeSet<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            if (!(e.getValue() instanceof String file) || file.contains("/") || file.startsWith(".") || !file.endsWith(".safetensors")) {
                throw new IllegalArgumentException(INDEX + ": tensor '" + e.getKey() + "' maps to '" + e.getValue()
                        + "', not a .safetensors file of the repository's top folder");
            }
            shards.add(file);
        }
        return List.copyOf(shards);
    }

    private static String string(Map<?, ?> m, String key, String what) {
        if (!(m.get(key) instanceof String s) || s.isEmpty()) {
            throw new IllegalArgumentException(what + ": missing or non-string '" + key + "'");
        }
        return s;
    }

    private static long number(Map<?, ?> m, String key, String what) {
        if (!(m.get(key) instanceof Long n) || n < 0) {
            throw new IllegalArgumentException(what + ": missing or bad '" + key + "'");
        }
        return n;
    }
}
