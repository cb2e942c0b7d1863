package io.kvtier.engine;

/**
 * How the next token is chosen from the logits.
 *
 * @param temperature 0 for greedy (argmax, lowest id on ties); otherwise softmax(logits / T)
 * @param topP        nucleus: sample among the most likely tokens whose probabilities sum to
 *                    at least topP (1 = all tokens)
 * @param seed        seed of the request's random stream (only used when temperature > 0)
 */
public record SamplingParams(float temperature, float topP, long seed) {

    public static final SamplingParams GREEDY = new SamplingParams(0f, 1f, 0L);

    public SamplingParams {
        if (!(temperature >= 0f) || Float.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature must be a finite number >= 0, got " + temperature);
        }
        if (!(topP > 0f && topP <= 1f)) {
            throw new IllegalArgumentException("top-p must be in (0, 1], got " + topP);
        }
    }

    public boolean greedy() {
        return temperature == 0f;
    }
}
