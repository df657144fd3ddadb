package dev.pagewarden.cli.testing;

import dev.pagewarden.cli.command.Json;

/** Parses test tools' JSON output; the parser itself now lives in main ({@link Json#parse}) for the HTTP benchmark. */
public final class MiniJson {
    private MiniJson() {
    }

    public static Object parse(String json) {
        return Json.parse(json);
    }
}
