package io.kvtier.offload;

import io.kvtier.kv.BlockKey;

/**
 * How a request's blocks group into chunks: chunk {@code c} is blocks
 * {@code [c * blocksPerChunk, (c + 1) * blocksPerChunk)}, keyed by its last block's key, its
 * parent the previous chunk's key (the namespace digest for chunk 0).
 *
 * @param blocksPerChunk device blocks per chunk (> 0)
 * @param blockSize      tokens per block (> 0)
 * @param namespace      the namespace digest, parent of every chain's first chunk
 */
record ChunkChain(int blocksPerChunk, int blockSize, BlockKey namespace) {

    /** Key of chunk {@code c} of {@code r}. */
    BlockKey key(SequenceView r, int c) {
        return r.blockKeys().get((c + 1) * blocksPerChunk - 1);
    }

    /** Parent key of chunk {@code c} of {@code r}. */
    BlockKey parent(SequenceView r, int c) {
        return c == 0 ? namespace : key(r, c - 1);
    }

    /** Token ids of chunk {@code c} of {@code r}. */
    int[] tokens(SequenceView r, int c) {
        int tokensPerChunk = blocksPerChunk * blockSize;
        return r.tokens(c * tokensPerChunk, (c + 1) * tokensPerChunk);
    }
}
