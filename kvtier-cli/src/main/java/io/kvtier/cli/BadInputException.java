package io.kvtier.cli;

/** A user mistake (bad flag value, missing file): reported as one line, exit code 2. */
public final class BadInputException extends RuntimeException {

    public BadInputException(String message) {
        super(message);
    }

    public BadInputException(String message, Throwable cause) {
        super(message, cause);
    }
}
