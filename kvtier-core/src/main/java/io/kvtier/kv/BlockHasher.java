package io.kvtier.kv;

/**
 * Computes chained block keys. The parent of block 0 is {@link #namespaceSeed()}, so keys are
 * stable across processes and restarts and differ between incompatible engines.
 * Implementations are used from the engine thread only.
 */
public interface BlockHasher {

    /** Key that stands as the parent of the first block: the namespace digest. */
    BlockKey namespaceSeed();

    /**
     * Key of the block holding {@code tokens[from..to)} after the prefix whose last key is
     * {@code parent} ({@link #namespaceSeed()} for the first block).
     */
    BlockKey hash(BlockKey parent, int[] tokens, int from, int to, ExtraKeys extra);

    /** The SHA-256 hasher over a namespace given as bytes (see {@link Namespace}). */
    static BlockHasher sha256(Namespace namespace) {
        return new Sha256BlockHasher(namespace);
    }
}
