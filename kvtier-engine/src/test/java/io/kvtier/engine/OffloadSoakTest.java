package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * ACCEPTANCE S01: mixed requests over a few shared prefixes with aborts, preemptions, tiny device
 * and host capacities, random transfer delays, failures, reordering, corruption and cache
 * resets, on the fingerprint model. Every output equals its reference, every invariant holds
 * after every step, nothing leaks after the drain; one host tier is smaller than the longest
 * requests (issue 15); two seeds with prefill priority. Size: {@code -Dkvtier.soak.requests=N} per
 * seed (default 700, six runs).
 */
class OffloadSoakTest {

    private static final int REQUESTS = Integer.getInteger("kvtier.soak.requests", 700);

    /** Host tiers of 6 chunks, and one of 2: smaller than the longest requests (up to 8 blocks), whose prefixes must still be stored and hit. */
    @ParameterizedTest(name = "seed {0}, host tier of {1} chunks, prefill priority {2}")
    @CsvSource({"101, 6, false", "202, 6, false", "303, 6, false", "404, 2, false", "515, 6, true", "606, 2, true"})
    void s01_soak(long seed, int hostChunks, boolean prefillPriority) {
        try {
            soak(seed, hostChunks, prefillPriority);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("S01 soak failed with seed " + seed + ": " + e.getMessage(), e);
        }
    }

    private void soak(long seed, int hostChunks, boolean prefillPriority) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int blocksPerChunk = 1 + rnd.nextInt(2);
        OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk).withOffloadPromptOnly(rnd.nextBoolean());
        EngineConfig ec = FingerprintEngines.config(4, 24).withMaxBatchTokens(8 + rnd.nextInt(56)).withPrefillPriority(prefillPriority);
        String policy = rnd.nextBoolean() ? "lru" : "arc";
        List<int[]> prefixes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            prefixes.add(FingerprintEngines.randomTokens(rnd, 4 + rnd.nextInt(17)));
        }
        SplittableRandom faults = rnd.split();
        try (OffloadFixture f = new OffloadFixture(ec, hostChunks, oc, policy)) {
            f.bytesCheckEvery = 1;
            f.transfers.reorder(true);
            f.transfers.failJobs(job -> faults.nextInt(25) == 0);
            f.transfers.delayJobs(job -> faults.nextInt(4) == 0, 1 + faults.nextInt(3));
            SoakRequests requests = new SoakRequests(rnd, prefixes, REQUESTS);
            List<Request> all = requests.all();
            requests.drive(f::submit, f.engine, () -> corruptSomeEntry(f, rnd), f::step);
            f.transfers.clearFaults();
            f.engine.drainTransfers();
            f.checkInvariants();
            f.assertDrained();
            int aborted = FingerprintEngines.assertMatchReferences(all);
            var s = f.offload.stats();
            // The run must really exercise the machinery it claims to.
            assertThat(f.engine.stats().preemptions()).as("preemptions").isPositive();
            assertThat(f.engine.scheduler().preemptedForPrefill()).as("preemptions for a prefill")
                    .matches(n -> prefillPriority ? n > 0 : n == 0, prefillPriority ? "positive" : "zero");
            assertThat(s.externalHitTokensTotal()).as("external hits").isPositive();
            // Every admission's loads, less what failed loads did not bring, request by request as in the run.
            java.util.Map<String, Long> byRequests = new java.util.TreeMap<>();
            all.forEach(r -> r.externalHitTokens().forEach((tier, n) -> byRequests.merge(tier, (long) n, Long::sum)));
            assertThat(byRequests).as("the requests' external hits").isEqualTo(s.externalHitTokens());
            assertThat(s.loadFailures()).as("load failures").isPositive();
            assertThat(aborted).as("aborts").isPositive();
            if (hostChunks < 6) {
                assertThat(s.blocksNotStored()).as("prefixes longer than the host tier").containsKey(OffloadStats.LONGER_THAN_HOST);
            }
        }
    }

    private static void corruptSomeEntry(OffloadFixture f, SplittableRandom rnd) {
        // Flip a byte of a random slot; the key living there (if any) is exempt from the bytes check.
        int slot = rnd.nextInt(f.host.capacity());
        f.damagedSlot(slot);
        f.transfers.corruptPayloadByte(slot, rnd.nextInt((int) f.host.slab().payloadBytesPerChunk()));
    }
}
