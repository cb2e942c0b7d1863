package io.kvtier.replay.optimum;

import java.util.Arrays;

/**
 * Reference LRU cache at chunk granularity, in instant mode (one request at a time, no time),
 * for cross-checking the real tiers' LRU request by request.
 *
 * <p>Per request: (1) lookup: the hit is the longest leading run of resident chunks within the
 * request's {@link HitRule} limit; (2) store: the request's full blocks are walked tail first
 * (last chunk to first), each resident one moved to the most-recently-used end, each missing
 * one inserted there, evicting the least recently used chunk while the cache is over capacity.
 * Tail first, as the engine's LRU policy touches keys, so that the head of a prefix, which every
 * later sharer needs, ends up hottest.
 *
 * <p>Difference from a real tier, which only matters when one request has more full blocks than
 * the whole capacity: the real tier's store is all-or-nothing and never evicts keys being
 * stored, while here the walk simply keeps the request's first {@code capacity} chunks.
 */
public final class LruReference {

    private LruReference() {
    }

    /**
     * Runs LRU with room for {@code capacityChunks} chunks (>= 0) over {@code trace}.
     * O(references).
     */
    public static HitResult run(ChunkTrace trace, long capacityChunks, HitRule rule) {
        if (capacityChunks < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacityChunks);
        }
        int n = trace.distinctChunks();
        // Intrusive doubly linked list over chunk ids; NIL marks "not resident". Head = LRU end.
        final int nil = -1;
        int[] prev = new int[n];
        int[] next = new int[n];
        boolean[] resident = new boolean[n];
        Arrays.fill(prev, nil);
        Arrays.fill(next, nil);
        int head = nil;
        int tail = nil;
        long size = 0;

        int[] hits = new int[trace.requests()];
        long total = 0;
        for (int r = 0; r < trace.requests(); r++) {
            int limit = trace.hittableChunks(r, rule);
            int k = 0;
            while (k < limit && resident[trace.chunk(r, k)]) {
                k++;
            }
            hits[r] = k;
            total += k;
            if (capacityChunks == 0) {
                continue;
            }
            for (int i = trace.fullChunks(r) - 1; i >= 0; i--) {
                int c = trace.chunk(r, i);
                if (resident[c]) {
                    if (c == tail) {
                        continue;
                    }
                    // unlink
                    if (prev[c] == nil) {
                        head = next[c];
                    } else {
                        next[prev[c]] = next[c];
                    }
                    prev[next[c]] = prev[c];
                } else {
                    resident[c] = true;
                    size++;
                }
                // append at the MRU end
                prev[c] = tail;
                next[c] = nil;
                if (tail == nil) {
                    head = c;
                } else {
                    next[tail] = c;
                }
                tail = c;
                if (size > capacityChunks) {
                    int victim = head;
                    head = next[victim];
                    prev[head] = nil;
                    next[victim] = nil;
                    resident[victim] = false;
                    size--;
                }
            }
        }
        return new HitResult("lru", capacityChunks, rule, trace.promptTokens(), total, hits);
    }
}
