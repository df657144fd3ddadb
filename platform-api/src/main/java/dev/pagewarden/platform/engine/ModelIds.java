package dev.pagewarden.platform.engine;

import java.util.regex.Pattern;

/**
 * What a model id may look like - the configured {@code pagewarden.model.id}, the {@code model}
 * field of a request, the model of the visibility endpoint - so that a hostile id never reaches
 * logs, the database or an error message unchecked.
 */
public final class ModelIds {
    public static final int MAX_LENGTH = 128;
    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9._:/-]{1," + MAX_LENGTH + "}");

    private ModelIds() {
    }

    public static boolean valid(String id) {
        return id != null && VALID.matcher(id).matches();
    }

    /** Why {@code id} is not a model id, for an error message (never echoing it). */
    public static String problem() {
        return "a model id is 1-" + MAX_LENGTH + " characters of A-Z, a-z, 0-9, '.', '_', ':', '/' or '-'";
    }
}
