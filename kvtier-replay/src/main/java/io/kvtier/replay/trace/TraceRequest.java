package io.kvtier.replay.trace;

import java.util.Arrays;

/**
 * One request of a Mooncake trace: when it arrives, how long its prompt and answer are, and one
 * hash id per 512-token block of its prompt. Hash ids are prefix-chained: two requests whose
 * blocks 0..i carry equal ids have equal prompts up to the end of block i.
 *
 * <p>Invariants (checked here; {@link TraceReader} reports them per line and field first):
 * {@code timestampMs >= 0}, {@code inputLength >= 1}, {@code outputLength >= 0}, every id
 * {@code >= 0}, and {@code hashIds.length == ceil(inputLength / 512)}: the last block is partial
 * when {@code inputLength} is not a multiple of 512.
 *
 * <p>The id array is copied on the way in and out so that a request is a value; hot loops use
 * {@link #hashId(int)} and {@link #blocks()} instead of {@link #hashIds()}.
 *
 * @param timestampMs  arrival time in milliseconds from the start of the trace
 * @param inputLength  prompt length in tokens
 * @param outputLength answer length in tokens
 * @param hashIds      one id per block of {@link #BLOCK_TOKENS} prompt tokens, partial last block included
 */
public record TraceRequest(long timestampMs, int inputLength, int outputLength, int[] hashIds) {

    /** Tokens per hashed block in the Mooncake traces: the granularity of {@code hash_ids}. */
    public static final int BLOCK_TOKENS = 512;

    public TraceRequest {
        if (timestampMs < 0) {
            throw new IllegalArgumentException("timestampMs must be >= 0, got " + timestampMs);
        }
        if (inputLength < 1) {
            throw new IllegalArgumentException("inputLength must be >= 1, got " + inputLength);
        }
        if (outputLength < 0) {
            throw new IllegalArgumentException("outputLength must be >= 0, got " + outputLength);
        }
        if (hashIds == null) {
            throw new IllegalArgumentException("hashIds must not be null");
        }
        if (hashIds.length != blocksFor(inputLength)) {
            throw new IllegalArgumentException("inputLength " + inputLength + " needs " + blocksFor(inputLength)
                    + " hash ids, got " + hashIds.length);
        }
        hashIds = hashIds.clone();
        for (int id : hashIds) {
            if (id < 0) {
                throw new IllegalArgumentException("hash ids must be >= 0, got " + id);
            }
        }
    }

    /** Blocks of {@link #BLOCK_TOKENS} needed for {@code tokens} tokens: ceil(tokens / 512). */
    public static int blocksFor(int tokens) {
        return (tokens + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
    }

    /** A copy of the hash ids. */
    @Override
    public int[] hashIds() {
        return hashIds.clone();
    }

    /** Hash id of prompt block {@code block} (0-based). */
    public int hashId(int block) {
        return hashIds[block];
    }

    /** Number of prompt blocks, the partial last one included. */
    public int blocks() {
        return hashIds.length;
    }

    /** Number of full 512-token prompt blocks: the only ones a cache ever stores. */
    public int fullBlocks() {
        return inputLength / BLOCK_TOKENS;
    }

    /** Tokens in prompt block {@code block}: 512, or fewer for a partial last block. */
    public int blockLength(int block) {
        return Math.min(BLOCK_TOKENS, inputLength - block * BLOCK_TOKENS);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TraceRequest r && r.timestampMs == timestampMs && r.inputLength == inputLength
                && r.outputLength == outputLength && Arrays.equals(r.hashIds, hashIds);
    }

    @Override
    public int hashCode() {
        return ((Long.hashCode(timestampMs) * 31 + inputLength) * 31 + outputLength) * 31 + Arrays.hashCode(hashIds);
    }

    @Override
    public String toString() {
        return "TraceRequest[t=" + timestampMs + "ms, in=" + inputLength + ", out=" + outputLength
                + ", blocks=" + hashIds.length + "]";
    }
}
