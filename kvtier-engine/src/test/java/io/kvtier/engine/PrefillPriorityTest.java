package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.offload.OffloadConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Prefill priority ({@link EngineConfig#prefillPriority()}): with a host tier, a new request whose
 * prompt does not fit the device beside a long decode preempts it, gets its first token at once,
 * and the victim resumes by loading its prompt's KV from the host tier; every output equals its
 * reference and every invariant holds after every step. Without it (or without offloading) the
 * new request waits for the decode to end.
 */
class PrefillPriorityTest {

    private static final int MAX_TOKENS_A = 30;

    /** What a run shows: the step at which B had its first token, whether A was done then, A's preemptions and loads. */
    private record Run(int bFirstTokenStep, boolean aFinishedBefore, int aPreemptions, long bytesLoaded, long prefillPreemptions) {
    }

    /**
     * 12 device blocks of 4 tokens. A (8-token prompt, 30 tokens) decodes until it holds 5 blocks;
     * then B (40-token prompt: 10 blocks) arrives, more than the 7 free: it evicts A's oldest cached blocks.
     */
    private static Run run(boolean prefillPriority) {
        int[] a = FingerprintEngines.nonStopping(1, 8, MAX_TOKENS_A);
        int[] b = FingerprintEngines.nonStopping(40, 40, 3);
        EngineConfig ec = FingerprintEngines.config(4, 12).withPrefillPriority(prefillPriority);
        try (OffloadFixture f = new OffloadFixture(ec, 16, OffloadConfig.DEFAULT, "lru")) {
            Request ra = f.submit(a, MAX_TOKENS_A);
            while (ra.numOutputTokens() < 12) {
                f.step();
                f.engine.drainTransfers(); // A's prompt blocks are in the host tier before B arrives
            }
            assertThat(f.engine.kvCacheManager().blockTable(ra.id()).length).isEqualTo(5);
            Request rb = f.submit(b, 3);
            List<Request> done = new ArrayList<>();
            int step = 0;
            int bFirst = -1;
            boolean aDone = false;
            while (f.engine.hasWork()) {
                long before = f.engine.stats().steps();
                done.addAll(f.step());
                step++;
                if (bFirst < 0 && rb.numOutputTokens() > 0) {
                    bFirst = step;
                    aDone = ra.isFinished();
                }
                if (f.engine.stats().steps() == before && f.offload.busy()) {
                    f.engine.drainTransfers();
                }
                assertThat(step).as("steps").isLessThan(1000);
            }
            f.engine.drainTransfers();
            f.checkInvariants();
            f.assertDrained();
            assertThat(done).hasSize(2);
            FingerprintEngines.assertMatchReferences(done);
            // What a client is told was cached is the first admission's: A's found nothing, whatever it reloaded later.
            assertThat(ra.promptExternalHitTokens()).isZero();
            assertThat(ra.externalHitTokens().values().stream().mapToInt(Integer::intValue).sum())
                    .as("on: A's prompt block 0 is still on the device (blocks are released last-first, so a prefix's "
                            + "head is evicted last), block 1 is loaded").isEqualTo(prefillPriority ? 4 : 0);
            return new Run(bFirst, aDone, ra.preemptions(), f.offload.stats().bytesLoaded(),
                    f.engine.scheduler().preemptedForPrefill());
        }
    }

    @Test
    void aNewRequestPreemptsALongDecodeForItsFirstTokenAndTheVictimResumesByALoad() {
        Run on = run(true);
        assertThat(on.bFirstTokenStep()).as("B's first token in its first step").isEqualTo(1);
        assertThat(on.aFinishedBefore()).isFalse();
        assertThat(on.aPreemptions()).isEqualTo(1);
        assertThat(on.prefillPreemptions()).isEqualTo(1);
        // Part of A's prompt comes back from the host tier (its decoded tail is recomputed).
        assertThat(on.bytesLoaded()).isPositive();
    }

    @Test
    void withoutPrefillPriorityTheNewRequestWaitsForTheDecode() {
        Run off = run(false);
        assertThat(off.aFinishedBefore()).isTrue();
        assertThat(off.bFirstTokenStep()).as("after A's remaining 18 decode steps").isGreaterThan(18);
        assertThat(off.aPreemptions()).isZero();
        assertThat(off.prefillPreemptions()).isZero();
    }

    /**
     * A (8-token prompt, 30 tokens) decodes; B (10 blocks of prompt) preempts it, finishes, and A
     * resumes by a load. Once A made progress again, C (10 blocks of prompt) arrives: A was
     * preempted for a prefill once already, so C waits for A to finish instead of making a second
     * gap between A's tokens. Every output equals its reference.
     */
    @Test
    void aRequestIsPreemptedForAPrefillAtMostOnce() {
        int[] a = FingerprintEngines.nonStopping(1, 8, MAX_TOKENS_A);
        EngineConfig ec = FingerprintEngines.config(4, 12).withPrefillPriority(true);
        try (OffloadFixture f = new OffloadFixture(ec, 16, OffloadConfig.DEFAULT, "lru")) {
            Request ra = f.submit(a, MAX_TOKENS_A);
            List<Request> done = new ArrayList<>();
            while (ra.numOutputTokens() < 12) {
                done.addAll(f.step());
                f.engine.drainTransfers();
            }
            Request rb = f.submit(FingerprintEngines.nonStopping(40, 40, 3), 3);
            int resumedAt = -1;
            Request rc = null;
            for (int step = 0; f.engine.hasWork(); step++) {
                long before = f.engine.stats().steps();
                done.addAll(f.step());
                if (f.engine.stats().steps() == before && f.offload.busy()) {
                    f.engine.drainTransfers();
                }
                if (rc == null && rb.isFinished() && ra.status() == Request.Status.RUNNING && ra.numOutputTokens() > ra.outputsAtAdmission()) {
                    resumedAt = ra.numOutputTokens();
                    f.engine.drainTransfers();
                    rc = f.submit(FingerprintEngines.nonStopping(80, 40, 3), 3); // arrives once A made progress after resuming
                }
                if (rc != null && !ra.isFinished()) {
                    assertThat(rc.numOutputTokens()).as("C waits for A's blocks").isZero();
                }
                assertThat(step).as("steps").isLessThan(1000);
            }
            f.engine.drainTransfers();
            f.checkInvariants();
            f.assertDrained();
            assertThat(resumedAt).as("A resumed before finishing").isBetween(13, MAX_TOKENS_A - 1);
            assertThat(done).hasSize(3);
            FingerprintEngines.assertMatchReferences(done);
            assertThat(ra.preemptions()).isEqualTo(1);
            assertThat(f.engine.scheduler().preemptedForPrefill()).isEqualTo(1);
        }
    }

    @Test
    void withoutOffloadingPrefillPriorityChangesNothing() {
        int[] a = FingerprintEngines.nonStopping(1, 8, MAX_TOKENS_A);
        int[] b = FingerprintEngines.nonStopping(40, 40, 3);
        try (Engine e = FingerprintEngines.engine(FingerprintEngines.config(4, 12).withPrefillPriority(true))) {
            Request ra = new Request(0, a, MAX_TOKENS_A, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(ra);
            while (ra.numOutputTokens() < 12) {
                e.step();
            }
            e.submit(new Request(1, b, 3, SamplingParams.GREEDY, ExtraKeys.NONE));
            List<Request> done = e.runToCompletion();
            assertThat(done.getFirst().id()).isZero();
            assertThat(e.stats().preemptions()).isZero();
            assertThat(e.scheduler().preemptedForPrefill()).isZero();
            FingerprintEngines.assertMatchReferences(done);
        }
    }
}
