package io.kvtier.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The soaks' request stream: each step 0 to 2 new requests over one of a few shared prefixes
 * (a random tail of up to 12 tokens, 1 to 16 tokens to generate), and now and then an abort of
 * an earlier one. Draws from the soak's seeded random in a fixed order.
 */
final class SoakRequests {

    private final SplittableRandom rnd;
    private final List<int[]> prefixes;
    private int limit;
    private final List<Request> all = new ArrayList<>();

    SoakRequests(SplittableRandom rnd, List<int[]> prefixes, int limit) {
        this.rnd = rnd;
        this.prefixes = prefixes;
        this.limit = limit;
    }

    /** Submits this step's new requests to {@code f}, then maybe aborts one. */
    void arrive(OffloadFixture f) {
        arrive(f::submit, f.engine);
    }

    /** Submits this step's new requests with {@code submit} (prompt, tokens to generate), then maybe aborts one on {@code engine}. */
    void arrive(java.util.function.BiFunction<int[], Integer, Request> submit, Engine engine) {
        for (int k = rnd.nextInt(3); k > 0 && all.size() < limit; k--) {
            int[] prefix = prefixes.get(rnd.nextInt(prefixes.size()));
            int[] prompt = FingerprintEngines.concat(prefix, FingerprintEngines.randomTokens(rnd, rnd.nextInt(13)));
            all.add(submit.apply(prompt, 1 + rnd.nextInt(16)));
        }
        if (rnd.nextInt(40) == 0 && !all.isEmpty()) {
            engine.abort(all.get(rnd.nextInt(all.size())).id());
        }
    }

    /**
     * The soak's loop, until every request is submitted and {@code engine} has no work: each turn
     * this turn's arrivals, now and then a {@code corrupt}ion (1 in 60), a cache reset (1 in 400) or a
     * device cache reset (1 in 150), then one {@code step} (which checks the invariants); a turn that
     * ran no step waits for the transfers. At most 100 turns per request.
     */
    void drive(java.util.function.BiFunction<int[], Integer, Request> submit, Engine engine, Runnable corrupt, Runnable step) {
        int steps = 0;
        while (!allSubmitted() || engine.hasWork()) {
            arrive(submit, engine);
            if (rnd.nextInt(60) == 0) {
                corrupt.run();
            }
            if (rnd.nextInt(400) == 0) {
                engine.resetCache();
            }
            if (rnd.nextInt(150) == 0) {
                engine.resetDevicePrefixCache();
            }
            long before = engine.stats().steps();
            step.run();
            if (engine.stats().steps() == before && engine.offload().busy()) {
                engine.drainTransfers();
            }
            org.assertj.core.api.Assertions.assertThat(++steps).as("steps").isLessThan(100 * limit);
        }
    }

    /** Lets {@code more} requests arrive after the ones asked so far (a soak that runs to a goal rather than a count). */
    void extend(int more) {
        limit += more;
    }

    /** Whether every request was submitted. */
    boolean allSubmitted() {
        return all.size() >= limit;
    }

    /** Every request submitted, in order (a live list: the caller may add its own). */
    List<Request> all() {
        return all;
    }
}
