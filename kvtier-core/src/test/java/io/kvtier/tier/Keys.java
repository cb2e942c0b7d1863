package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.ArrayList;
import java.util.List;

/** Integer keys for tier tests: {@code k(i)} is {@code new BlockKey(0,0,0,i)}; the parent of key i is key i-1. */
final class Keys {

    private Keys() {
    }

    static BlockKey k(long i) {
        return new BlockKey(0, 0, 0, i);
    }

    static List<BlockKey> keys(long... ids) {
        List<BlockKey> out = new ArrayList<>(ids.length);
        for (long i : ids) {
            out.add(k(i));
        }
        return out;
    }

    /** Parents of a chain of integer keys: key i-1 for key i. */
    static List<BlockKey> parents(long... ids) {
        List<BlockKey> out = new ArrayList<>(ids.length);
        for (long i : ids) {
            out.add(k(i - 1));
        }
        return out;
    }

    static long id(BlockKey key) {
        return key.w3();
    }

    static List<Long> ids(List<BlockKey> keys) {
        return keys.stream().map(Keys::id).toList();
    }
}
