package io.kvtier.engine;

/**
 * A caller's own end of generation, checked by the engine after each generated token, in the same
 * place as the stop token and the length limit, so that one step decides how a request ended
 * (e.g. the server's stop strings: the response, the usage and the metrics all read that one
 * {@link FinishReason}).
 */
@FunctionalInterface
public interface StopCondition {

    /** Never stops. */
    StopCondition NONE = token -> false;

    /**
     * Called on the engine thread with each generated token, in order (never the model's stop
     * token). Must not block.
     *
     * @return true to end the request with {@link FinishReason#STOP} after this token (the token
     *         stays in the output)
     */
    boolean stopsAfter(int token);
}
