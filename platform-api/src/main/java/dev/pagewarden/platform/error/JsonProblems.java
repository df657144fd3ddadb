package dev.pagewarden.platform.error;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamReadException;

import java.util.List;
import java.util.regex.Pattern;

/**
 * A JSON body the parser refused, as a 400 a client can act on: where (line, column) and what,
 * phrased for users - never the parser's class names, feature flags or source excerpts.
 */
public final class JsonProblems {
    private static final List<String> CUT_AT = List.of(" (for ", " at [Source", "[Source", ": enable `", "\n");
    private static final Pattern INTERNAL = Pattern.compile("`|tools\\.jackson|com\\.fasterxml|java\\.|JsonNode|Map<");
    private static final Pattern DUPLICATE = Pattern.compile("Duplicate Object property \"(.*)\"", Pattern.DOTALL);

    private JsonProblems() {
    }

    public static ApiException toApi(JacksonException e) {
        String where = where(e.getLocation());
        String original = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        var duplicate = DUPLICATE.matcher(original);
        if (duplicate.matches()) {
            String key = e.processor() instanceof JsonParser p && p.currentName() != null ? p.currentName()
                    : duplicate.group(1);
            return ApiException.invalid(key, "the request body has the key '" + key + "' more than once" + where
                    + "; each key may appear only once");
        }
        if (!(e instanceof StreamReadException)) {
            // well-formed JSON of the wrong shape for this endpoint (an array where an object belongs, ...)
            return ApiException.invalid(null, "the request body must be a JSON object with the documented fields");
        }
        String reason = original;
        for (String cut : CUT_AT) {
            int i = reason.indexOf(cut);
            if (i >= 0) {
                reason = reason.substring(0, i);
            }
        }
        reason = reason.strip();
        boolean usable = !reason.isEmpty() && !INTERNAL.matcher(reason).find();
        return ApiException.invalid(null, "the request body is not valid JSON" + where + (usable ? ": " + reason : ""));
    }

    private static String where(TokenStreamLocation location) {
        if (location == null || location.getLineNr() <= 0) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }
}
