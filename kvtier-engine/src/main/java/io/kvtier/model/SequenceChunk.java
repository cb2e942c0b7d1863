package io.kvtier.model;

import java.util.Objects;

/**
 * Consecutive tokens of one sequence to run through the model in one step.
 *
 * <p>The tokens sit at positions {@code startPos .. startPos + tokens.length - 1}. The sequence's
 * KV lives in a paged slab: position {@code p} is in block {@code blockTable[p / blockSize]},
 * slot {@code p % blockSize}; the table must cover every position up to the chunk's last
 * (positions before {@code startPos} must already hold the KV written by earlier steps). The
 * arrays are not copied: do not change them while a forward pass runs.
 *
 * @param tokens     token ids, at least one
 * @param startPos   position of {@code tokens[0]}, 0-based
 * @param blockTable device block ids of the sequence, in position order
 * @param wantLogits whether to return the logits of the last token
 */
public record SequenceChunk(int[] tokens, int startPos, int[] blockTable, boolean wantLogits) {

    public SequenceChunk {
        Objects.requireNonNull(tokens, "tokens");
        Objects.requireNonNull(blockTable, "blockTable");
        if (tokens.length == 0) {
            throw new IllegalArgumentException("a chunk needs at least one token");
        }
        if (startPos < 0) {
            throw new IllegalArgumentException("startPos must be >= 0, got " + startPos);
        }
    }

    /** Position of the last token. */
    public int lastPos() {
        return startPos + tokens.length - 1;
    }
}
