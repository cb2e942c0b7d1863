package io.kvtier.replay.optimum;

/**
 * The unbounded-cache ceiling: every full block of every request is stored after the request,
 * never evicted, and a request hits its longest leading run of chunks stored before it (within
 * the chunks its {@link HitRule} lets hit). No cache of any policy or size hits more.
 */
public final class Ceiling {

    private Ceiling() {
    }

    /** Hit tokens of an unbounded cache over {@code trace}; O(references). */
    public static HitResult compute(ChunkTrace trace, HitRule rule) {
        boolean[] seen = new boolean[trace.distinctChunks()];
        int[] hits = new int[trace.requests()];
        long total = 0;
        for (int r = 0; r < trace.requests(); r++) {
            int limit = trace.hittableChunks(r, rule);
            int k = 0;
            while (k < limit && seen[trace.chunk(r, k)]) {
                k++;
            }
            hits[r] = k;
            total += k;
            for (int i = 0, n = trace.fullChunks(r); i < n; i++) {
                seen[trace.chunk(r, i)] = true;
            }
        }
        return new HitResult("ceiling", HitResult.UNBOUNDED, rule, trace.promptTokens(), total, hits);
    }
}
