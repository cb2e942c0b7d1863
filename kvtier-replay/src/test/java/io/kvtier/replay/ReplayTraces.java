package io.kvtier.replay;

import io.kvtier.replay.trace.Trace;
import io.kvtier.replay.trace.TraceRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Small hand-made and seeded random traces for the replay tests. */
final class ReplayTraces {

    private ReplayTraces() {
    }

    /** A request of {@code inputLength} tokens at time 0, answer 1 token, with one hash id per 512-token block. */
    static TraceRequest req(int inputLength, int... ids) {
        return new TraceRequest(0, inputLength, 1, ids);
    }

    /** A request arriving at {@code ms} with an answer of {@code output} tokens. */
    static TraceRequest at(long ms, int inputLength, int output, int... ids) {
        return new TraceRequest(ms, inputLength, output, ids);
    }

    static Trace trace(TraceRequest... requests) {
        return new Trace("hand", List.of(requests));
    }

    /**
     * A seeded random prefix-sharing trace (as a chat: requests extend a prefix of a recent
     * request), lengths ending mostly inside a block, one in five on a block boundary.
     */
    static Trace random(long seed, int requests, int maxBlocks) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<TraceRequest> out = new ArrayList<>();
        int nextId = 0;
        for (int r = 0; r < requests; r++) {
            int blocks = 1 + rnd.nextInt(maxBlocks);
            int[] ids = new int[blocks];
            int shared = 0;
            if (!out.isEmpty() && rnd.nextInt(10) < 8) {
                int back = 1 + rnd.nextInt(Math.min(out.size(), 1 + rnd.nextInt(16)));
                TraceRequest base = out.get(out.size() - back);
                shared = Math.min(blocks, 1 + rnd.nextInt(base.blocks()));
                System.arraycopy(base.hashIds(), 0, ids, 0, shared);
            }
            for (int i = shared; i < blocks; i++) {
                ids[i] = nextId++;
            }
            int last = rnd.nextInt(5) == 0 ? 512 : 1 + rnd.nextInt(511);
            out.add(new TraceRequest(r * 100L, (blocks - 1) * 512 + last, 1 + rnd.nextInt(40), ids));
        }
        return new Trace("random-" + seed, out);
    }

    /** Instant-mode defaults (device min, host unbounded, LRU) with {@code host} as the host capacity. */
    static ReplayConfig instant(Capacity host, Policy policy) {
        return ReplayConfig.defaults(ReplayConfig.Mode.INSTANT).withHost(host).withPolicy(policy);
    }
}
