package io.kvtier.model;

import java.util.Objects;

/**
 * Consecutive tokens of one sequence to run through the model in one step.
 *
 * <p>The tokens sit at positions {@code startPos .. startPos + tokens.length - 1}. The sequence's
 * KV lives in paged slabs, one per KV group ({@link PagedKv}): position {@code p} of group g is
 * in block {@code blockTables[g][p / blockSize]}, slot {@code p % blockSize}; each table must cover
 * every position its layers read or write up to the chunk's last (positions before
 * {@code startPos} must already hold the KV written by earlier steps); a sliding-window group's
 * entries before the window may be -1. The arrays are not copied: do not change them while a
 * forward pass runs.
 *
 * @param tokens      token ids, at least one
 * @param startPos    position of {@code tokens[0]}, 0-based
 * @param blockTables device block ids of the sequence per KV group, in position order
 * @param wantLogits  whether to return the logits of the last token
 */
public record SequenceChunk(int[] tokens, int startPos, int[][] blockTables, boolean wantLogits) {

    /** A chunk of a model with one KV group. */
    public SequenceChunk(int[] tokens, int startPos, int[] blockTable, boolean wantLogits) {
        this(tokens, startPos, new int[][] {Objects.requireNonNull(blockTable, "blockTable")}, wantLogits);
    }

    public SequenceChunk {
        Objects.requireNonNull(tokens, "tokens");
        Objects.requireNonNull(blockTables, "blockTables");
        if (tokens.length == 0) {
            throw new IllegalArgumentException("a chunk needs at least one token");
        }
        if (startPos < 0) {
            throw new IllegalArgumentException("startPos must be >= 0, got " + startPos);
        }
    }

    /** The block table of group 0 (the only one of a one-group model). */
    public int[] blockTable() {
        return blockTables[0];
    }

    /** Position of the last token. */
    public int lastPos() {
        return startPos + tokens.length - 1;
    }
}
