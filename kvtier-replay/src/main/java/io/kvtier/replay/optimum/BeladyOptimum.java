package io.kvtier.replay.optimum;

/**
 * Offline Belady reference at a capacity in chunks, in instant mode: after each request all its
 * full blocks are offered for storing; the cache keeps the chunks whose next use is soonest.
 *
 * <p>Per request: (1) lookup as every policy does: the hit is the longest leading run of
 * resident chunks within the request's {@link HitRule} limit; (2) the request's full blocks are
 * offered head first; a resident one gets its new next use; a missing one is admitted if the
 * cache has room, or else if its next use is sooner than that of the resident chunk used
 * furthest in the future, which it evicts; otherwise it is bypassed (not admitted). A chunk
 * never used again is never admitted.
 *
 * <p>"Next use" is the position, in the flat sequence of all requests' chunks, of the next
 * occurrence of the chunk within a request's hittable chunks (an occurrence that could not hit,
 * such as the last block of a prompt whose length is a multiple of 512 under {@link HitRule#ENGINE}, is
 * not a use). Next uses are precomputed in one backward pass; residents sit in a max-heap keyed
 * by next use, so a run costs O(references * log capacity).
 *
 * <p>How optimal is it? Furthest-next-use with bypass (Belady's MIN) maximizes the number of
 * chunk hits among all policies that admit a chunk only when a request offers it (no
 * prefetching). A prefix cache counts a chunk hit only when all earlier chunks of the request
 * hit too, and in general MIN is not optimal for that. It is here, because of how prefix keys
 * are built: every use of a chunk is preceded, in the same request, by a use of its parent, so
 * a parent's next use is always sooner than its child's. MIN therefore never evicts a parent
 * while keeping a child with a future use, nor admits a child whose parent it bypasses, and
 * every chunk hit MIN scores is also a prefix hit. The tests check this against exhaustive
 * search on small traces. Two limits remain: the optimum is per chunk (every chunk weighs 512
 * tokens, as every hit does), and it assumes instant mode (all of one request's stores happen
 * before the next request's lookup).
 */
public final class BeladyOptimum {

    private static final int NEVER = Integer.MAX_VALUE;

    private BeladyOptimum() {
    }

    /** Runs the Belady reference with room for {@code capacityChunks} chunks (>= 0) over {@code trace}. */
    public static HitResult run(ChunkTrace trace, long capacityChunks, HitRule rule) {
        if (capacityChunks < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacityChunks);
        }
        int[] nextUse = nextUses(trace, rule);
        int[] flat = trace.flatChunks();
        IndexedMaxHeap cache = new IndexedMaxHeap(trace.distinctChunks());
        long capacity = Math.min(capacityChunks, trace.distinctChunks());

        int[] hits = new int[trace.requests()];
        long total = 0;
        for (int r = 0; r < trace.requests(); r++) {
            int s = trace.start(r);
            int limit = trace.hittableChunks(r, rule);
            int k = 0;
            while (k < limit && cache.contains(flat[s + k])) {
                k++;
            }
            hits[r] = k;
            total += k;
            if (capacity == 0) {
                continue;
            }
            for (int p = s, end = s + trace.fullChunks(r); p < end; p++) {
                int c = flat[p];
                int nu = nextUse[p];
                if (cache.contains(c)) {
                    cache.update(c, nu);
                } else if (nu != NEVER) {
                    if (cache.size() < capacity) {
                        cache.insert(c, nu);
                    } else if (cache.keyOf(cache.peek()) > nu) {
                        cache.poll();
                        cache.insert(c, nu);
                    }
                }
            }
        }
        return new HitResult("belady", capacityChunks, rule, trace.promptTokens(), total, hits);
    }

    /**
     * For each flat position, the flat position of the next use of the same chunk in a later
     * request ({@link #NEVER} if none). Uses are only positions within a request's hittable chunks.
     */
    static int[] nextUses(ChunkTrace trace, HitRule rule) {
        int[] flat = trace.flatChunks();
        int[] next = new int[flat.length];
        int[] upcoming = new int[trace.distinctChunks()];
        java.util.Arrays.fill(upcoming, NEVER);
        for (int r = trace.requests() - 1; r >= 0; r--) {
            int s = trace.start(r);
            int n = trace.fullChunks(r);
            // A chunk occurs at most once per request (its depth is fixed), so reading the
            // successors' uses before recording this request's is exact.
            for (int i = 0; i < n; i++) {
                next[s + i] = upcoming[flat[s + i]];
            }
            int limit = trace.hittableChunks(r, rule);
            for (int i = 0; i < limit; i++) {
                upcoming[flat[s + i]] = s + i;
            }
        }
        return next;
    }
}
