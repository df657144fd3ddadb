package dev.pagewarden.platform.error;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * OpenAI's error object: {@code {"error":{"message","type","param","code"}}}. {@code param} and
 * {@code code} are present as null when they do not apply, as OpenAI sends them.
 */
public record ApiError(String message, String type, String param, String code) {

    public Map<String, Object> body() {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("message", message);
        error.put("type", type);
        error.put("param", param);
        error.put("code", code);
        return Map.of("error", error);
    }
}
