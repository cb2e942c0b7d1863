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

    @Test
    void aSlowRateKeepsADecimalSoItNeverReadsZero() {
        assertThat(GenerateReport.rate(4 / 9.58)).isEqualTo("0.4");
        assertThat(GenerateReport.rate(1.04)).isEqualTo("1.0");
        assertThat(GenerateReport.rate(9.94)).isEqualTo("9.9");
        assertThat(GenerateReport.rate(76.4)).isEqualTo("76");
        assertThat(GenerateReport.rate(20807.6)).isEqualTo("20808");
        assertThat(GenerateReport.groupedRate(2.47)).isEqualTo("2.5");
        assertThat(GenerateReport.groupedRate(20807.6)).isEqualTo("20,808");
    }
}
