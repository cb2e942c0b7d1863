package io.kvtier.model;

/**
 * A model or tokenizer file that cannot be used: missing, unreadable, truncated, inconsistent
 * or not in the expected format. The message is one line that names the file and the problem,
 * fit to be shown to a user as is.
 */
public class ModelFormatException extends RuntimeException {

    public ModelFormatException(String message) {
        super(message);
    }

    public ModelFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
