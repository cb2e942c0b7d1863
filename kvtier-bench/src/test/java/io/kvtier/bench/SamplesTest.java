package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class SamplesTest {

    @Test
    void medianIsTheMiddleOrTheMeanOfTheMiddleTwo() {
        assertThat(Samples.median(new double[] {3, 1, 2})).isEqualTo(2.0);
        assertThat(Samples.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThat(Samples.median(List.of(7.0))).isEqualTo(7.0);
    }

    @Test
    void medianLeavesItsInputAsItWas() {
        double[] xs = {3, 1, 2};
        Samples.median(xs);
        assertThat(xs).containsExactly(3, 1, 2);
    }

    @Test
    void quartilesInterpolateBetweenRanks() {
        double[] s = {10, 20, 30, 40, 50};
        assertThat(Samples.quantile(s, 0.25)).isEqualTo(20.0);
        assertThat(Samples.quantile(s, 0.75)).isEqualTo(40.0);
        assertThat(Samples.quantile(new double[] {10, 20}, 0.25)).isEqualTo(12.5);
        assertThat(Samples.quantile(s, 0)).isEqualTo(10.0);
        assertThat(Samples.quantile(s, 1)).isEqualTo(50.0);
    }

    /** Was: four copies of the median, each reading index -1 or 0 of an empty array. */
    @Test
    void noSamplesIsRefusedNotReadPast() {
        assertThatThrownBy(() -> Samples.median(new double[0])).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no samples");
        assertThatThrownBy(() -> Samples.quantile(new double[] {1}, 1.5)).isInstanceOf(IllegalArgumentException.class);
    }
}
