package io.kvtier.replay;

import io.kvtier.replay.trace.RandomTraces;
import io.kvtier.replay.trace.Trace;
import io.kvtier.replay.trace.TraceRequest;
import java.util.List;

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

    /** A seeded random prefix-sharing trace: {@link RandomTraces#random}. */
    static Trace random(long seed, int requests, int maxBlocks) {
        return RandomTraces.random(seed, requests, maxBlocks);
    }

    /** Instant-mode defaults (device min, host unbounded, LRU) with {@code host} as the host capacity. */
    static ReplayConfig instant(Capacity host, Policy policy) {
        return ReplayConfig.defaults(ReplayConfig.Mode.INSTANT).withHost(host).withPolicy(policy);
    }
}
