package io.kvtier.replay;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Percentiles of a replay's request times: exact, never above the max (a histogram's rounding put a p50 past the makespan). */
class ExactPercentilesTest {

    @Test
    void oneValueIsEveryPercentile() {
        ExactPercentiles p = new ExactPercentiles();
        p.record(3_266_412_345L);
        assertThat(p.seconds()).isEqualTo(new ReplayResult.Percentiles(3.266412345, 3.266412345, 3.266412345, 3.266412345,
                3.266412345));
    }

    @Test
    void nearestRankOfManyAndTheMeanExact() {
        ExactPercentiles p = new ExactPercentiles();
        for (int i = 100; i >= 1; i--) { // out of order, past the first array's size
            p.record(i * 1_000_000_000L);
        }
        p.record(2_510_294_400_000_000L); // a 10M-token run's last request: 2,510,294.4 s
        ReplayResult.Percentiles s = p.seconds();
        assertThat(s.p50()).isEqualTo(51.0); // 101 values: rank ceil(50.5) = 51
        assertThat(s.p90()).isEqualTo(91.0);
        assertThat(s.p99()).isEqualTo(100.0);
        assertThat(s.max()).isEqualTo(2_510_294.4);
        assertThat(s.mean()).isEqualTo((5050 + 2_510_294.4) / 101, org.assertj.core.data.Offset.offset(1e-6));
    }

    /** Each value fits the clock, their sum does not: the mean of 5e18 and 6e18 ns read -3,723,372,086.781 s. */
    @Test
    void theMeanOfValuesWhoseSumPassesALongIsTheirMean() {
        ExactPercentiles p = new ExactPercentiles();
        p.record(5_000_000_000_000_000_000L);
        p.record(6_000_000_000_000_000_000L);
        assertThat(p.seconds().mean()).isEqualTo(5.5e9);
    }

    @Test
    void noValueIsZero() {
        assertThat(new ExactPercentiles().seconds()).isEqualTo(new ReplayResult.Percentiles(0, 0, 0, 0, 0));
    }
}
