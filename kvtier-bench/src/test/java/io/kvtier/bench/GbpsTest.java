package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GbpsTest {
    @Test
    void threeSignificantDigitsWithoutAnExponent() {
        assertThat(Gbps.of(12.345)).isEqualTo("12.3");
        assertThat(Gbps.of(1.2345)).isEqualTo("1.23");
        assertThat(Gbps.of(0.004234)).as("a slow run is not 0.00").isEqualTo("0.00423");
        assertThat(Gbps.of(2.0)).isEqualTo("2");
        assertThat(Gbps.of(0)).isEqualTo("0");
    }
}
