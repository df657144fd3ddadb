package dev.pagewarden.core.testing;

import dev.pagewarden.command.Json;

/** Parses test tools' JSON output; the parser itself now lives in main ({@link Json#parse}) for the HTTP benchmark. */
public final class MiniJson {
    private MiniJson() {
    }

    public static Object parse(String json) {
        return Json.parse(json);
    }
}
