package io.kvtier.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CapacityTest {

    @Test
    void onlyZeroTokensInAnySpellingIsNone() {
        assertThat(Capacity.parse("0", "--host-cache-tokens").isNone()).isTrue();
        assertThat(Capacity.parse("0Mi", "--host-cache-tokens").isNone()).isTrue();
        assertThat(Capacity.tokens(1).isNone()).isFalse();
        assertThat(Capacity.INF.isNone()).isFalse();
        assertThat(Capacity.MIN.isNone()).isFalse();
    }

    @Test
    void minBehindTheDeviceTierIsRefusedNamingTheFlag() {
        ReplayConfig d = ReplayConfig.defaults(ReplayConfig.Mode.INSTANT);
        assertThatThrownBy(() -> d.withHost(Capacity.MIN)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--host-cache-tokens: 'min' is for the device tier only");
        assertThatThrownBy(() -> new ReplayConfig.Remote(Capacity.MIN, 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--remote-cache-tokens: 'min' is for the device tier only");
    }

    /** The rule of every flag that counts tokens; a plain number is whole (1.5 was cut to 1 token). */
    @Test
    void aCountIsWholeWithoutASuffixAndScaledWithOne() {
        assertThat(Capacity.count("3M")).isEqualTo(3_000_000);
        assertThat(Capacity.count("1Mi")).isEqualTo(1_048_576);
        assertThat(Capacity.count("1.5k")).isEqualTo(1500);
        assertThat(Capacity.count("1_000")).isEqualTo(1000);
        assertThatThrownBy(() -> Capacity.count("1.5")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> Capacity.parse("1.5", "--host-cache-tokens")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--host-cache-tokens: '1.5' is not a capacity in tokens (e.g. 1M, 3000000, 448k, 1Mi, inf)");
        assertThatThrownBy(() -> Capacity.parse("-3", "--host-cache-tokens")).isInstanceOf(IllegalArgumentException.class);
    }
}
