package io.kvtier.offload;

/**
 * What a forward pass computed, as the step-time fit of {@link LoadCosts} sees it.
 *
 * @param tokens        tokens computed in the step
 * @param pairs         causal (query, key) pairs of its multi-token chunks: a chunk of {@code n}
 *                      tokens from position {@code s} has {@code n s + n (n + 1) / 2}
 * @param decodeContext context positions read by its one-token chunks (decodes): {@code s + 1} each
 */
public record StepShape(long tokens, double pairs, long decodeContext) {

    /** A chunk's causal pairs: {@code n} tokens from position {@code start}. */
    public static double pairs(long start, long n) {
        return n * (double) start + n * (n + 1) / 2.0;
    }

    /**
     * The shape of a step computing chunk {@code i} = {@code counts[i]} tokens from position {@code starts[i]}.
     */
    public static StepShape of(int[] starts, int[] counts) {
        long tokens = 0;
        double pairs = 0;
        long context = 0;
        for (int i = 0; i < starts.length; i++) {
            tokens += counts[i];
            if (counts[i] == 1) {
                context += starts[i] + 1L;
            } else {
                pairs += pairs(starts[i], counts[i]);
            }
        }
        return new StepShape(tokens, pairs, context);
    }
}
