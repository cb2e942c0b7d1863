package io.kvtier.replay.optimum;

import java.util.Arrays;

/**
 * Outcome of one offline cache analysis over a {@link ChunkTrace}: how many prompt tokens hit.
 * Hits are whole 512-token chunks, so {@code hitTokens = 512 * hitChunks}.
 *
 * @param policy             "ceiling", "lru" or "belady"
 * @param capacityChunks     cache capacity in chunks; {@link #UNBOUNDED} for the ceiling
 * @param rule               which chunks of a request could hit
 * @param promptTokens       prompt tokens over all requests (the denominator of the ratio)
 * @param hitChunks          chunks hit over all requests
 * @param hitChunksByRequest chunks hit by each request, in trace order (copied in and out), for
 *                           cross-checking a real tier request by request
 */
public record HitResult(String policy, long capacityChunks, HitRule rule, long promptTokens, long hitChunks,
                        int[] hitChunksByRequest) {

    /** Capacity of an unbounded cache. */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    public HitResult {
        hitChunksByRequest = hitChunksByRequest.clone();
    }

    /** Hit tokens: {@code 512 * hitChunks}. */
    public long hitTokens() {
        return hitChunks * ChunkTrace.CHUNK_TOKENS;
    }

    /** Hit tokens / prompt tokens, in [0, 1]. */
    public double hitRatio() {
        return promptTokens == 0 ? 0 : (double) hitTokens() / promptTokens;
    }

    /** Capacity in tokens ({@link #UNBOUNDED} stays unbounded). */
    public long capacityTokens() {
        return capacityChunks == UNBOUNDED ? UNBOUNDED : capacityChunks * ChunkTrace.CHUNK_TOKENS;
    }

    /** Number of requests. */
    public int requests() {
        return hitChunksByRequest.length;
    }

    /** Chunks hit by request {@code r}. */
    public int hitChunks(int r) {
        return hitChunksByRequest[r];
    }

    /** A copy of the per-request hit chunks. */
    @Override
    public int[] hitChunksByRequest() {
        return hitChunksByRequest.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HitResult h && h.policy.equals(policy) && h.capacityChunks == capacityChunks
                && h.rule == rule && h.promptTokens == promptTokens && h.hitChunks == hitChunks
                && Arrays.equals(h.hitChunksByRequest, hitChunksByRequest);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(new long[] {policy.hashCode(), capacityChunks, rule.hashCode(), promptTokens, hitChunks})
                * 31 + Arrays.hashCode(hitChunksByRequest);
    }

    @Override
    public String toString() {
        String cap = capacityChunks == UNBOUNDED ? "inf" : io.kvtier.text.Plural.count(capacityChunks, "chunk");
        return String.format("%s[%s, %s]: %d/%d tokens = %.4f", policy, cap, rule, hitTokens(), promptTokens,
                hitRatio());
    }
}
