package io.kvtier.replay.optimum;

import io.kvtier.replay.trace.TraceRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

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

    /**
     * A random prefix-sharing trace: each request extends a prefix of an earlier request (or
     * starts afresh) with new blocks; about one request in five has a length that is a
     * multiple of 512, the others end in a partial block.
     *
     * @param seed      random seed
     * @param requests  number of requests
     * @param maxBlocks most blocks per request
     */
    static ChunkTrace random(long seed, int requests, int maxBlocks) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<TraceRequest> out = new ArrayList<>();
        int nextId = 0;
        for (int r = 0; r < requests; r++) {
            int blocks = 1 + rnd.nextInt(maxBlocks);
            int[] ids = new int[blocks];
            int shared = 0;
            if (!out.isEmpty() && rnd.nextInt(10) < 8) {
                // Recent requests are likelier to be extended, as in a chat.
                int back = Math.min(out.size(), 1 + rnd.nextInt(Math.min(out.size(), 1 + rnd.nextInt(12))));
                TraceRequest base = out.get(out.size() - back);
                shared = Math.min(blocks, 1 + rnd.nextInt(base.blocks()));
                System.arraycopy(base.hashIds(), 0, ids, 0, shared);
            }
            for (int i = shared; i < blocks; i++) {
                ids[i] = nextId++;
            }
            int last = rnd.nextInt(5) == 0 ? 512 : 1 + rnd.nextInt(511);
            out.add(new TraceRequest(r, (blocks - 1) * 512 + last, 1, ids));
        }
        return ChunkTrace.of("random-" + seed, out);
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
