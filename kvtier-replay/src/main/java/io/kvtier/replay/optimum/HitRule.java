package io.kvtier.replay.optimum;

/**
 * Which leading chunks of a request may count as a hit. Only full 512-token blocks are ever
 * stored, so a partial last block is never a hit under either rule.
 */
public enum HitRule {

    /** Any full block may hit: up to {@code floor(inputLength / 512)} chunks. */
    FULL_BLOCKS,

    /**
     * As the engine does: a hit never covers the last prompt token, since at least one token
     * must be computed to produce the first output. Up to {@code floor((inputLength - 1) / 512)}
     * chunks, i.e. one fewer than {@link #FULL_BLOCKS} when {@code inputLength} is a multiple of 512.
     */
    ENGINE;

    /** Chunks of a prompt of {@code inputLength} tokens that may hit, with {@code chunkTokens} per chunk. */
    public int hittableChunks(int inputLength, int chunkTokens) {
        return this == FULL_BLOCKS ? inputLength / chunkTokens : (inputLength - 1) / chunkTokens;
    }
}
