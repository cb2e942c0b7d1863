package io.kvtier.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** {@link PairedLead}: the decayed lead, its standard error and the bound, on hand-computed samples. */
class PairedLeadTest {

    @Test
    void aLeadWithinItsNoiseIsNotSignificantAndASteadyOneIs() {
        PairedLead noisy = new PairedLead(1.0);
        assertThat(noisy.standardError()).isInfinite();
        noisy.add(1);
        assertThat(noisy.standardError()).as("one sample").isInfinite();
        assertThat(noisy.exceeds(2)).isFalse();
        noisy.add(-1);
        noisy.add(1);
        // Lead 1 over 3 samples: mean 1/3, variance (1 - 1/9) x 3/2 = 4/3, error sqrt(3 x 4/3) = 2.
        assertThat(noisy.lead()).isEqualTo(1.0);
        assertThat(noisy.standardError()).isCloseTo(2.0, within(1e-12));
        assertThat(noisy.exceeds(0.49)).isTrue();
        assertThat(noisy.exceeds(0.51)).isFalse();
        assertThat(noisy.exceeds(2)).isFalse();
        PairedLead steady = new PairedLead(1.0);
        steady.add(1);
        steady.add(1);
        assertThat(steady.standardError()).isZero(); // no variance: any positive lead is significant
        assertThat(steady.exceeds(2)).isTrue();
        steady.clear();
        assertThat(steady.lead()).isZero();
        assertThat(steady.standardError()).isInfinite();
    }

    @Test
    void samplesDecayAndTheEffectiveCountFollowsTheWeights() {
        PairedLead p = new PairedLead(0.5);
        p.add(4);
        p.add(0);
        // Weights 0.5 and 1: lead 2; sum w 1.5, sum w^2 1.25, n = 1.8; decayed sum of d^2 = 8;
        // mean 4/3, variance (8 / 1.5 - 16/9) x 1.8 / 0.8 = 8; error sqrt(1.25 x 8) = sqrt(10).
        assertThat(p.lead()).isEqualTo(2.0);
        assertThat(p.standardError()).isCloseTo(Math.sqrt(10), within(1e-12));
    }
}
