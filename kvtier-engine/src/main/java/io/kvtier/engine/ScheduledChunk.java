package io.kvtier.engine;

/**
 * Tokens of one request computed in one step: positions [startPos, startPos + tokens.length).
 * Position p's KV goes, in KV group g, to device block {@code blockTables[g][p / blockSize]}, slot
 * {@code p % blockSize} (a model with one group has one table). Immutable by convention (arrays
 * are not copied; do not modify).
 *
 * @param requestId   the request
 * @param tokens      token ids at those positions
 * @param startPos    first position
 * @param blockTables per KV group, device block ids covering at least what the group reads and
 *                    writes of [0, startPos + tokens.length) (a sliding-window group's entries
 *                    before the window are -1)
 * @param wantLogits  whether the logits of the last token are needed (to sample)
 */
public record ScheduledChunk(long requestId, int[] tokens, int startPos, int[][] blockTables, boolean wantLogits) {

    /** A chunk of a model with one KV group. */
    public ScheduledChunk(long requestId, int[] tokens, int startPos, int[] blockTable, boolean wantLogits) {
        this(requestId, tokens, startPos, new int[][] {blockTable}, wantLogits);
    }

    /** The block table of group 0 (the only one of a one-group model). */
    public int[] blockTable() {
        return blockTables[0];
    }
}
