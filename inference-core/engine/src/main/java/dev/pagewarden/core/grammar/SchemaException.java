package dev.pagewarden.core.grammar;

/** A JSON schema the grammar compiler cannot take; {@link #path} says where (dotted, from the schema's root). */
public final class SchemaException extends IllegalArgumentException {
    private final String path;

    SchemaException(String path, String message) {
        super(message);
        this.path = path;
    }

    /** Where in the schema: empty for the root, else like {@code properties.name.items}. */
    public String path() {
        return path;
    }
}
