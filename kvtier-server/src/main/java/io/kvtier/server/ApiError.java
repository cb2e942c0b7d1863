package io.kvtier.server;

/**
 * An error answered as OpenAI's error object {@code {"error": {"message", "type", "param", "code"}}}
 * with an HTTP status. {@link #retryable()} false adds {@code x-should-retry: false}: retrying the
 * same request cannot succeed. {@link #retryAfterSeconds()} > 0 adds {@code Retry-After}.
 */
final class ApiError extends Exception {

    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private final boolean retryable;
    private final int retryAfterSeconds;
    private final String allow;

    private ApiError(int status, String type, String message, String param, String code, boolean retryable, int retryAfter) {
        this(status, type, message, param, code, retryable, retryAfter, null);
    }

    private ApiError(int status, String type, String message, String param, String code, boolean retryable, int retryAfter,
                     String allow) {
        super(message, null, false, false);
        this.allow = allow;
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryable = retryable;
        this.retryAfterSeconds = retryAfter;
    }

    /** 400: a parameter is missing, of the wrong type or out of range. */
    static ApiError badRequest(String message, String param) {
        return new ApiError(400, "invalid_request_error", message, param, null, false, 0);
    }

    /** 400 for a prompt that does not fit the model's context (OpenAI's code). */
    /** @param param the field that holds the prompt: {@code prompt} or {@code messages} */
    static ApiError contextLength(String message, String param) {
        return new ApiError(400, "invalid_request_error", message, param, "context_length_exceeded", false, 0);
    }

    static ApiError unauthorized() {
        return new ApiError(401, "invalid_request_error", "missing or wrong API key: send 'Authorization: Bearer <key>'",
                null, "invalid_api_key", false, 0);
    }

    static ApiError notFound(String message, String code) {
        return new ApiError(404, "invalid_request_error", message, code.equals("model_not_found") ? "model" : null, code, false, 0);
    }

    /** 405 with the {@code Allow} header HTTP requires of it ({@code allow}: "GET, HEAD, OPTIONS"). */
    static ApiError methodNotAllowed(String method, String path, String allow) {
        return new ApiError(405, "invalid_request_error", method + " is not allowed on " + path + " (allowed: " + allow + ")",
                null, null, false, 0, allow);
    }

    static ApiError tooLarge(long max) {
        return new ApiError(413, "invalid_request_error", "request body larger than " + max + " bytes", null,
                "request_too_large", false, 0);
    }

    /** 429: the waiting queue is full; retry after a second. */
    static ApiError queueFull(String message) {
        return new ApiError(429, "rate_limit_exceeded", message, null, "queue_full", true, 1);
    }

    /** 503: the server is stopping or its engine died. */
    static ApiError unavailable(String message) {
        return new ApiError(503, "service_unavailable", message, null, null, true, 0);
    }

    /** 500: a bug or an engine failure in mid-request. */
    static ApiError internal(String message) {
        return new ApiError(500, "internal_error", message, null, null, true, 0);
    }

    int status() {
        return status;
    }

    String type() {
        return type;
    }

    String param() {
        return param;
    }

    String code() {
        return code;
    }

    boolean retryable() {
        return retryable;
    }

    int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** The methods a 405's route allows, or null. */
    String allow() {
        return allow;
    }
}
