package io.kvtier.engine;

/**
 * How the next token is chosen from the logits.
 *
 * @param temperature 0 for greedy (argmax, lowest id on ties); otherwise softmax(logits / T)
 * @param topP        nucleus: sample among the most likely tokens whose probabilities sum to
 *                    at least topP (1 = all tokens)
 * @param seed        seed of the request's random stream (only used when temperature > 0)
 * @param ownSeed     true when {@code seed} is this request's own (an API client's {@code seed}):
 *                    its stream is then a function of the seed alone, so the same request repeats
 *                    its output; false when it is a run's seed ({@code generate --seed}), mixed with
 *                    the request id so that the run's requests draw independent streams
 */
public record SamplingParams(float temperature, float topP, long seed, boolean ownSeed) {

    public static final SamplingParams GREEDY = new SamplingParams(0f, 1f, 0L);

    /** A run's seed: the stream also depends on the request id. */
    public SamplingParams(float temperature, float topP, long seed) {
        this(temperature, topP, seed, false);
    }

    /** A request's own seed: the stream depends on the seed alone. */
    public static SamplingParams withOwnSeed(float temperature, float topP, long seed) {
        return new SamplingParams(temperature, topP, seed, true);
    }

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
