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
}
