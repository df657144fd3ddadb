package dev.pagewarden.incident.input;

/** Text refused by {@link StoredText}: {@code field} names the input, as forms and the APIs report it. */
public final class InvalidTextException extends IllegalArgumentException {
    private final String field;

    public InvalidTextException(String field, String message) {
        super(message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
