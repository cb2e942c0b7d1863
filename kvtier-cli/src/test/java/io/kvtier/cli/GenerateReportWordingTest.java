package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GenerateReportWordingTest {
    @Test
    void aBreakerThatNeverOpenedIsNamedByWhatHappened() {
        assertThat(GenerateReport.breaker("open", 0)).isEqualTo("breaker open (no answer from the store since start)");
        assertThat(GenerateReport.breaker("closed", 0)).isEqualTo("breaker closed");
    }

    @Test
    void aBreakerThatOpenedCountsItsOpenings() {
        assertThat(GenerateReport.breaker("closed", 1)).isEqualTo("breaker closed (opened 1 time)");
        assertThat(GenerateReport.breaker("partial", 3)).isEqualTo("breaker partial (opened 3 times)");
    }
}
