package io.kvtier.kv;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;

/**
 * A KV group: the layers of a model that share one attention kind, full attention
 * ({@code window} 0) or a sliding window of {@code window} positions, and so one rule for which
 * of a request's blocks are still read. Each group keeps its own block tables
 * ({@link KvCacheManager}); a block's token chain key ({@link BlockKey}) is shared by all
 * groups, and {@link #key} qualifies it with the group for what the group stores under it.
 *
 * @param index  position of the group in its model's group list
 * @param window 0 for full attention; else the query at position p reads keys
 *               {@code p - window + 1 .. p}
 * @param layers the model layers of the group, ascending
 */
public record KvGroup(int index, int window, int[] layers) {

    public KvGroup {
        Objects.requireNonNull(layers, "layers");
        if (index < 0 || window < 0 || layers.length == 0) {
            throw new IllegalArgumentException("KV group " + index + " with window " + window + " and "
                    + layers.length + " layers");
        }
        layers = layers.clone();
    }

    @Override
    public int[] layers() {
        return layers.clone();
    }

    /** True for a sliding-window group. */
    public boolean sliding() {
        return window > 0;
    }

    /**
     * The first block any query at position {@code nextPosition} or later can read: 0 for full
     * attention, else the block of position {@code max(0, nextPosition - window + 1)}. Blocks
     * before it have left the window for good.
     */
    public int firstReadBlock(int nextPosition, int blockSize) {
        return window == 0 ? 0 : Math.max(0, nextPosition - window + 1) / blockSize;
    }

    /**
     * The key under which this group caches and stores the block whose chain key is
     * {@code blockKey}: SHA-256 of the chain key, the group's index, window and layers. Two groups
     * (or two group layouts) never share a stored block. {@link KvCacheManager#cacheKey} uses it for
     * every group but group 0, which keeps the chain key (so a one-group model's keys are unchanged).
     */
    public BlockKey key(BlockKey blockKey) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            ByteBuffer b = ByteBuffer.allocate(BlockKey.BYTES + 8 + 4 * layers.length);
            blockKey.writeTo(b);
            b.putInt(index).putInt(window);
            for (int l : layers) b.putInt(l);
            md.update("kvtier-group".getBytes(StandardCharsets.US_ASCII));
            md.update(b.array());
            return BlockKey.of(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KvGroup g && index == g.index && window == g.window && Arrays.equals(layers, g.layers);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * index + window) + Arrays.hashCode(layers);
    }

    @Override
    public String toString() {
        return "KvGroup[" + index + (window == 0 ? ", full" : ", window " + window) + ", layers "
                + Arrays.toString(layers) + "]";
    }
}
