package io.kvtier.replay.optimum;

import io.kvtier.replay.trace.RandomTraces;
import io.kvtier.replay.trace.TraceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Small hand-made and seeded random traces for the optimum tests. */
final class TestTraces {

    private TestTraces() {
    }

    /** A request of {@code inputLength} tokens with the given hash ids (one per 512-token block). */
    static TraceRequest req(int inputLength, int... ids) {
        return new TraceRequest(0, inputLength, 1, ids);
    }

    static ChunkTrace trace(TraceRequest... requests) {
        return ChunkTrace.of("hand", List.of(requests));
    }

    /** A seeded random prefix-sharing trace ({@link RandomTraces#random}) as chunk ids. */
    static ChunkTrace random(long seed, int requests, int maxBlocks) {
        return ChunkTrace.of(RandomTraces.random(seed, requests, maxBlocks));
    }

    /**
     * The best total of hit chunks any policy with room for {@code capacity} chunks can reach,
     * by exhaustive search: after each request the cache may keep any set of at most
     * {@code capacity} chunks among those it held and those the request offered. Exponential;
     * only for a few distinct chunks (at most 20).
     */
    static long bruteForceOptimum(ChunkTrace t, int capacity, HitRule rule) {
        if (t.distinctChunks() > 20) {
            throw new IllegalArgumentException("too many chunks for exhaustive search: " + t.distinctChunks());
        }
        List<java.util.Map<Integer, Long>> memo = new ArrayList<>();
        for (int r = 0; r < t.requests(); r++) {
            memo.add(new java.util.HashMap<>());
        }
        return best(t, capacity, rule, 0, 0, memo);
    }

    private static long best(ChunkTrace t, int capacity, HitRule rule, int r, int resident,
                             List<java.util.Map<Integer, Long>> memo) {
        if (r == t.requests()) {
            return 0;
        }
        Long known = memo.get(r).get(resident);
        if (known != null) {
            return known;
        }
        int limit = t.hittableChunks(r, rule);
        int hits = 0;
        while (hits < limit && (resident & (1 << t.chunk(r, hits))) != 0) {
            hits++;
        }
        int candidates = resident;
        for (int i = 0; i < t.fullChunks(r); i++) {
            candidates |= 1 << t.chunk(r, i);
        }
        long bestRest = 0;
        // every subset of the candidates that fits, the empty set included
        for (int s = candidates; ; s = (s - 1) & candidates) {
            if (Integer.bitCount(s) <= capacity) {
                bestRest = Math.max(bestRest, best(t, capacity, rule, r + 1, s, memo));
            }
            if (s == 0) {
                break;
            }
        }
        long result = hits + bestRest;
        memo.get(r).put(resident, result);
        return result;
    }

    /** Renders a trace for failure messages. */
    static String describe(ChunkTrace t) {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < t.requests(); r++) {
            int[] c = new int[t.fullChunks(r)];
            for (int i = 0; i < c.length; i++) {
                c[i] = t.chunk(r, i);
            }
            b.append("\n  r").append(r).append(" len=").append(t.inputLength(r)).append(" chunks=")
                    .append(Arrays.toString(c));
        }
        return b.toString();
    }
}
