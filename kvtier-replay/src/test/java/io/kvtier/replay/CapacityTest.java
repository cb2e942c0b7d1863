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
}
