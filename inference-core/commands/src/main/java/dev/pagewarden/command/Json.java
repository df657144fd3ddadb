package dev.pagewarden.command;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The command line's JSON, through Jackson: reports written from maps, lists, strings, numbers and
 * booleans, with floating-point figures rounded to six significant digits (a report says 1076.5
 * tokens/s, not 1076.4999847412); and JSON read back as plain Java values for the HTTP benchmark's
 * stream chunks and the tests.
 */
public final class Json {
    private Json() {
    }

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private static final MathContext SIX_DIGITS = new MathContext(6);

    /**
     * Parses one JSON value: objects become {@link LinkedHashMap}, arrays {@link ArrayList}, numbers
     * {@link Double}, plus String, Boolean and null. Malformed input throws IllegalArgumentException
     * naming the offset.
     */
    public static Object parse(String json) {
        try {
            return plain(MAPPER.readTree(json));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("malformed JSON at offset " + e.getLocation().getCharOffset() + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    private static Object plain(JsonNode n) {
        return switch (n.getNodeType()) {
            case OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                n.properties().forEach(e -> m.put(e.getKey(), plain(e.getValue())));
                yield m;
            }
            case ARRAY -> {
                List<Object> l = new ArrayList<>(n.size());
                n.forEach(v -> l.add(plain(v)));
                yield l;
            }
            case NUMBER -> n.doubleValue();
            case STRING -> n.textValue();
            case BOOLEAN -> n.booleanValue();
            case NULL, MISSING -> null;
            case BINARY, POJO -> throw new IllegalArgumentException("unexpected JSON node " + n.getNodeType());
        };
    }

    public static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(rounded(value));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot write JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** The value with every double and float at six significant digits (non-finite ones as null), whole ones without a point. */
    private static Object rounded(Object v) {
        return switch (v) {
            case null -> null;
            case Double d -> rounded(d.doubleValue());
            case Float f -> rounded(f.doubleValue());
            case Map<?, ?> m -> {
                Map<String, Object> out = new LinkedHashMap<>();
                m.forEach((k, x) -> out.put(String.valueOf(k), rounded(x)));
                yield out;
            }
            case Collection<?> c -> c.stream().map(Json::rounded).toList();
            case String s -> s;
            case Number n -> n;
            case Boolean b -> b;
            default -> v.toString();
        };
    }

    private static Object rounded(double d) {
        if (!Double.isFinite(d)) {
            return null;
        }
        BigDecimal b = new BigDecimal(d).round(SIX_DIGITS).stripTrailingZeros();
        return b.scale() <= 0 && b.abs().compareTo(BigDecimal.valueOf(1_000_000_000_000_000L)) < 0
                ? (Object) b.longValueExact() : b;
    }
}
