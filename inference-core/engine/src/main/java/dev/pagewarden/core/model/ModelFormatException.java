package dev.pagewarden.core.model;

/** A model or tokenizer file (or a shape) is unusable; the message names the file or field and the problem. */
public class ModelFormatException extends RuntimeException {
    public ModelFormatException(String message) {
        super(message);
    }

    public ModelFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
