package io.kvtier.engine;

import java.util.SplittableRandom;

/**
 * The random stream of one request: a function of the run's seed and the request id only, so a
 * run is repeatable, and independent across seeds and ids; or, for a request with its own seed,
 * of that seed alone.
 *
 * <p>Why mixing matters: a {@link SplittableRandom} seeded with {@code x} draws
 * {@code mix(x + k·γ)} for k = 1, 2, ... (γ its golden-ratio step). Seeding it with
 * {@code seed·γ + id} made seed s+1's stream seed s's shifted by one draw, and made seed −k reach
 * state 0 (a draw of exactly 0, the first token id) at its k-th draw. Passing the seed and the id
 * through the SplitMix64 finalizer (a bijection on 64 bits with full avalanche) first puts every
 * (seed, id) pair at an unrelated point of the sequence: two streams overlap only if their
 * starting points happen to lie within a few draws of each other, about n / 2^64.
 */
public final class SamplingStreams {

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;
    /** Keeps own-seed streams apart from run-seed streams (an arbitrary odd constant). */
    private static final long OWN_SEED_DOMAIN = 0xD1B54A32D192ED03L;

    private SamplingStreams() {
    }

    /** The stream of request {@code requestId} under {@code seed} (any long, negative included). */
    public static SplittableRandom forRequest(long seed, long requestId) {
        return new SplittableRandom(streamSeed(seed, requestId));
    }

    /**
     * The stream of a request that brought its own seed (an API client's {@code seed}): the same
     * seed gives the same stream whatever the request's id or arrival order.
     */
    public static SplittableRandom forSeed(long seed) {
        return new SplittableRandom(mix64(mix64(seed) ^ OWN_SEED_DOMAIN));
    }

    /** The starting point of that stream: mix(mix(seed) + γ·(id + 1)). */
    static long streamSeed(long seed, long requestId) {
        return mix64(mix64(seed) + GOLDEN_GAMMA * (requestId + 1));
    }

    /** The SplitMix64 finalizer (Stafford's variant 13): a bijection whose every output bit depends on every input bit. */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
