package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GenerateReportWordingTest {
    @Test
    void aBreakerThatNeverOpenedSaysOnlyItsState() {
        assertThat(GenerateReport.breaker("closed", 0, null)).isEqualTo("breaker closed");
    }

    @Test
    void aBreakerThatOpenedCountsItsOpenings() {
        assertThat(GenerateReport.breaker("open", 1, null)).isEqualTo("breaker open (opened 1 time)");
        assertThat(GenerateReport.breaker("closed", 1, null)).isEqualTo("breaker closed (opened 1 time)");
        assertThat(GenerateReport.breaker("partial", 3, null)).isEqualTo("breaker partial (opened 3 times)");
    }

    /** trial10: a wrong password read "breaker off (opened 1 time)": the tier is off, and no breaker did it. */
    @Test
    void aTierThatTurnedItselfOffSaysWhyInShort() {
        assertThat(GenerateReport.breaker("off", 0, "authentication failed (WRONGPASS invalid username-password pair or user "
                + "is disabled.): check the remote user and password")).isEqualTo("tier off: authentication failed");
        assertThat(GenerateReport.breaker("off", 2, "the server refused key kvt:v1:a:0123:45 (NOPERM this user has no "
                + "permissions): give this user access to ~kvt:v1:a:0123:*"))
                .isEqualTo("tier off: the server refused key kvt:v1:a:0123:45 (breaker opened 2 times)");
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
