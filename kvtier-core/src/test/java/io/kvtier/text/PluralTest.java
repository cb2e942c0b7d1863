package io.kvtier.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PluralTest {
    @Test
    void oneIsSingularEveryOtherCountPlural() {
        assertThat(Plural.count(1, "request")).isEqualTo("1 request");
        assertThat(Plural.count(0, "request")).isEqualTo("0 requests");
        assertThat(Plural.count(2, "sequence")).isEqualTo("2 sequences");
        assertThat(Plural.count(-1, "block")).isEqualTo("-1 blocks");
    }

    @Test
    void aNounWithItsOwnPlural() {
        assertThat(Plural.count(1, "pass", "passes")).isEqualTo("1 pass");
        assertThat(Plural.count(5, "copy", "copies")).isEqualTo("5 copies");
    }

    @Test
    void groupedSeparatesThousands() {
        org.assertj.core.api.Assertions.assertThat(Plural.grouped(12_031, "request")).isEqualTo("12,031 requests");
        org.assertj.core.api.Assertions.assertThat(Plural.grouped(1, "layer")).isEqualTo("1 layer");
    }
}
