package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code bench generate} says of fractions of the bound it cannot vouch for: the runs' figures are given, not timed. */
class BoundNoteTest {

    private static final long WEIGHTS_15M_Q4 = 8_520_000L; // the 15M Q4_0 shape's matrices, about

    /** A pass over {@code bytes} at {@code gbps}, ns. */
    private static long pass(long bytes, double gbps) {
        return Math.round(bytes / gbps);
    }

    @Test
    void anIdleRunsFiguresNeedNoNote() {
        BoundNote.Run run = new BoundNote.Run(1, 2, WEIGHTS_15M_Q4, pass(WEIGHTS_15M_Q4, 40), 38e9, 0.3);
        BoundNote.Figure single = new BoundNote.Figure("single-sequence", 0.79, 0.81, 0.84);
        BoundNote.Figure batched = new BoundNote.Figure("32-sequence", 0.14, 0.17, 0.19);
        assertThat(BoundNote.flag(single)).isEmpty();
        assertThat(BoundNote.flag(run)).isEmpty();
        assertThat(BoundNote.note(run, List.of(single, batched))).isNull();
    }

    /**
     * A new user's {@code --max-tokens 2}: the decode warm-up had run no read pass, so the 4 timed
     * ones ran in C1's code at 0.10 GB/s where the same pass read 34.5 GB/s after the runs.
     */
    @Test
    void passesFarSlowerThanAfterTheRunsAreNamedAsTheCause() {
        BoundNote.Run run = new BoundNote.Run(1, 2, WEIGHTS_15M_Q4, pass(WEIGHTS_15M_Q4, 0.10), 34.5e9, 1.0);
        BoundNote.Figure single = new BoundNote.Figure("single-sequence", 106.67, 109.60, 112.53);
        BoundNote.Figure batched = new BoundNote.Figure("32-sequence", 13.09, 15.52, 17.96);
        assertThat(BoundNote.flag(single)).isEqualTo("; above 1.2: not a measurement, see the note");
        assertThat(BoundNote.flag(run)).isEqualTo("; after the runs the same pass read 34.50 GB/s: these were slowed,"
                + " see the note");
        assertThat(BoundNote.note(run, List.of(single, batched))).isEqualTo("note: fractions above 1.2 (single-sequence,"
                + " 32-sequence) are not measurements: a step cannot read its bytes faster than the read pass before it"
                + " streams them, so the passes were slowed. Likely: the passes during the runs read 0.10 GB/s at best,"
                + " the same pass after them 34.50");
    }

    /** {@code --threads 3} on 2 processors: the quartiles spread, and the note says why rather than blame the caches. */
    @Test
    void moreThreadsThanProcessorsIsTheLikelyCauseOfWideQuartiles() {
        BoundNote.Run run = new BoundNote.Run(3, 2, WEIGHTS_15M_Q4, pass(WEIGHTS_15M_Q4, 20), 25e9, 5.0);
        BoundNote.Figure single = new BoundNote.Figure("single-sequence", 0.30, 0.44, 0.63);
        BoundNote.Figure batched = new BoundNote.Figure("32-sequence", 0.05, 0.08, 0.12);
        assertThat(BoundNote.flag(single)).isEmpty();
        assertThat(BoundNote.note(run, List.of(single, batched))).isEqualTo("note: quartiles as far apart as 0.30-0.63"
                + " (single-sequence, 32-sequence) mean steps or passes were slowed at random; the median is a rough figure."
                + " Likely: --threads 3 on 2 processors: the threads take turns, and a pass's helpers (asleep between"
                + " passes, where a step's spin) wait longest for a processor; measure with --threads 2 or fewer");
    }

    @Test
    void aBusyMachineIsTheCauseWhenNothingElseIs() {
        BoundNote.Run run = new BoundNote.Run(1, 2, WEIGHTS_15M_Q4, pass(WEIGHTS_15M_Q4, 50), 39.4e9, 10.1);
        BoundNote.Figure single = new BoundNote.Figure("single-sequence", 0.16, 0.32, 0.37);
        BoundNote.Figure batched = new BoundNote.Figure("32-sequence", 0.05, 0.06, 0.07);
        assertThat(BoundNote.note(run, List.of(single, batched))).isEqualTo("note: quartiles as far apart as 0.16-0.37"
                + " (single-sequence) mean steps or passes were slowed at random; the median is a rough figure. Likely:"
                + " other work on the machine (load average 10.1 on 2 processors); measure on an idle machine");
        // no load average known (not every system has one)
        BoundNote.Run unknown = new BoundNote.Run(1, 2, WEIGHTS_15M_Q4, pass(WEIGHTS_15M_Q4, 50), 39.4e9, -1);
        assertThat(BoundNote.note(unknown, List.of(single))).endsWith("Likely: other work on the machine; measure on an idle machine");
    }

    /** stories260K's 0.2 MB of weights: a pass is mostly its start and hand-off, so a fraction above 1 says nothing of decode. */
    @Test
    void smallWeightsAreNamedWithThePassTime() {
        long weights = 230_000;
        BoundNote.Run run = new BoundNote.Run(1, 2, weights, 300_000, 0, 0.5);
        BoundNote.Figure single = new BoundNote.Figure("single-sequence", 3.10, 3.30, 3.52);
        assertThat(BoundNote.note(run, List.of(single))).isEqualTo("note: fractions above 1.2 (single-sequence) are not"
                + " measurements: a step cannot read its bytes faster than the read pass before it streams them, so the"
                + " passes were slowed. Likely: a read pass of these 0.2 MB of weights took 300 us, mostly its start and"
                + " the hand-off to the pool's threads, so for weights this small the bound says little");
    }

    /** Only the upper quartile above 1.2: the median stands, unflagged, but the note says some steps' fractions cannot be. */
    @Test
    void anUpperQuartileAboveTheLimitGetsTheNoteNotTheFlag() {
        BoundNote.Run run = new BoundNote.Run(2, 2, WEIGHTS_15M_Q4, pass(WEIGHTS_15M_Q4, 30), 40e9, 1.0);
        BoundNote.Figure single = new BoundNote.Figure("single-sequence", 0.90, 1.05, 1.30);
        assertThat(BoundNote.flag(single)).isEmpty();
        assertThat(BoundNote.note(run, List.of(single))).startsWith("note: fractions above 1.2 (single-sequence) are not"
                + " measurements").endsWith("Likely: other work on the machine (load average 1.0 on 2 processors); measure"
                + " on an idle machine");
    }
}
