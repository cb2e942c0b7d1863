package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Predicate;

/**
 * Least recently used. One recency list (least recent first); {@link #insert} and {@link #touch}
 * walk a chain tail-first, so after touching {@code [5,6,7]} the eviction order is 7, 6, 5.
 */
public final class LruPolicy implements CachePolicy {

    private final LinkedHashSet<BlockKey> order = new LinkedHashSet<>(); // least recent first

    @Override
    public String name() {
        return "lru";
    }

    @Override
    public void insert(List<BlockKey> keys) {
        for (int i = keys.size() - 1; i >= 0; i--) {
            order.addLast(keys.get(i)); // moves an existing member to the most recent end
        }
    }

    @Override
    public void touch(List<BlockKey> keys) {
        for (int i = keys.size() - 1; i >= 0; i--) {
            BlockKey k = keys.get(i);
            if (order.contains(k)) {
                order.addLast(k);
            }
        }
    }

    @Override
    public List<BlockKey> victims(int n, Predicate<BlockKey> evictable) {
        List<BlockKey> out = new ArrayList<>(Math.max(0, n));
        for (BlockKey k : order) {
            if (out.size() >= n) {
                break;
            }
            if (evictable.test(k)) {
                out.add(k);
            }
        }
        return out;
    }

    @Override
    public void evicted(BlockKey key) {
        order.remove(key);
    }

    @Override
    public void remove(BlockKey key) {
        order.remove(key);
    }

    @Override
    public void clear() {
        order.clear();
    }

    @Override
    public boolean contains(BlockKey key) {
        return order.contains(key);
    }

    @Override
    public int size() {
        return order.size();
    }

    /** Members, least recently used first (a copy). */
    public List<BlockKey> recencyOrder() {
        return List.copyOf(order);
    }

    @Override
    public String toString() {
        return "LruPolicy" + order.stream().map(BlockKey::shortHex).toList();
    }
}
