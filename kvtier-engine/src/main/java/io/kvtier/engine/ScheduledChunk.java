package io.kvtier.engine;

/**
 * Tokens of one request computed in one step: positions [startPos, startPos + tokens.length).
 * Position p's KV goes to device block {@code blockTable[p / blockSize]}, slot
 * {@code p % blockSize}. Immutable by convention (arrays are not copied; do not modify).
 *
 * @param requestId  the request
 * @param tokens     token ids at those positions
 * @param startPos   first position
 * @param blockTable device block ids covering at least [0, startPos + tokens.length)
 * @param wantLogits whether the logits of the last token are needed (to sample)
 */
public record ScheduledChunk(long requestId, int[] tokens, int startPos, int[] blockTable, boolean wantLogits) {
}
