package dev.pagewarden.platform;

import tools.jackson.databind.json.JsonMapper;

import java.util.Map;

/** JSON for assertions. */
final class Json {
    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private Json() {
    }

    static Map<?, ?> parse(String json) {
        return MAPPER.readValue(json, Map.class);
    }
}
