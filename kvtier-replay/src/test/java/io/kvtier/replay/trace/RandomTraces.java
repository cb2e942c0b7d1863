package io.kvtier.replay.trace;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Seeded random traces shared by the replay and optimum tests. */
public final class RandomTraces {

    private RandomTraces() {
    }

    /**
     * A seeded random prefix-sharing trace, as a chat: about four requests in five extend a prefix
     * of a recent request with new blocks, the others start afresh; lengths end mostly inside a
     * block, about one in five on a block boundary; arrivals 100 ms apart.
     *
     * @param seed      random seed
     * @param requests  number of requests
     * @param maxBlocks most blocks per request
     */
    public static Trace random(long seed, int requests, int maxBlocks) {
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
}
