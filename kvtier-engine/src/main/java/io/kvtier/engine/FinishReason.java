package io.kvtier.engine;

/** Why a request stopped generating. */
public enum FinishReason {
    /**
     * The model produced the stop token (not included in the output), or the request's
     * {@link StopCondition} matched (its last token included).
     */
    STOP,
    /** Max new tokens or the model's context limit was reached. */
    LENGTH,
    /** Aborted by the caller. */
    ABORT;

    /** The name used in JSON output: stop, length, abort. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
