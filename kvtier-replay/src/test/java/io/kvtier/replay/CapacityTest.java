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

    /** The rule of every flag that counts tokens; a plain number is digits (1.5 was cut to 1 token, 1.0 read as 1). */
    @Test
    void aCountIsWholeWithoutASuffixAndScaledWithOne() {
        assertThat(Capacity.count("3M")).isEqualTo(3_000_000);
        assertThat(Capacity.count("1Mi")).isEqualTo(1_048_576);
        assertThat(Capacity.count("1.5k")).isEqualTo(1500);
        assertThat(Capacity.count("1_000")).isEqualTo(1000);
        assertThat(Capacity.count("1.0k")).isEqualTo(1000);
        for (String plain : new String[] {"1.5", "1.0", "4096.0", "-1.0", "1_000.0"}) {
            assertThatThrownBy(() -> Capacity.count(plain)).as(plain).isInstanceOf(NumberFormatException.class)
                    .hasMessage("'" + plain + "' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M)");
        }
        assertThatThrownBy(() -> Capacity.parse("1.0", "--host-cache-tokens")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--host-cache-tokens: '1.0' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M, inf)");
        assertThatThrownBy(() -> Capacity.parse("lots", "--device-tokens")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--device-tokens: 'lots' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M, inf, min)");
        assertThatThrownBy(() -> Capacity.parse("-3", "--host-cache-tokens")).isInstanceOf(IllegalArgumentException.class);
    }

    /** Exact decimal arithmetic: 0.000249M was 248 tokens (0.000249 * 1e6 in doubles is 248.99...). */
    @Test
    void aCountIsExactNotFloatingPoint() {
        assertThat(Capacity.count("0.000249M")).isEqualTo(249);
        assertThatThrownBy(() -> Capacity.count("0.001Gi")).hasMessage("'0.001Gi' is 1073741.824 tokens, not a whole number");
        assertThat(Capacity.count("0.5Ki")).isEqualTo(512);
        assertThatThrownBy(() -> Capacity.count("0.0129k")).hasMessage("'0.0129k' is 12.9 tokens, not a whole number");
        assertThatThrownBy(() -> Capacity.count("0.0005k")).hasMessage("'0.0005k' is 0.5 tokens, not a whole number");
        assertThatThrownBy(() -> Capacity.count("2147483648", Integer.MAX_VALUE))
                .hasMessage("'2147483648' is too large: at most 2,147,483,647 tokens");
        assertThat(Capacity.count("2147483647", Integer.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
    }

    /** The grammar is the README's: digits (grouped in threes by underscores), a fraction before a suffix, a suffix spelled exactly. */
    @Test
    void onlyTheDocumentedSpellingsAreCounts() {
        for (String bad : new String[] {"1,2", "1_2", "12_34", "12d", "12f", "0x1p4", "1e3", " 4 k", "4 k", " 4", "1m", "4K", "1ki", "1KI",
                "1mi", "1g", ".5k", "1.k", "+4", "NaN", "Infinity", "", "k", "4kk"}) {
            assertThatThrownBy(() -> Capacity.count(bad)).as(bad).isInstanceOf(NumberFormatException.class)
                    .hasMessage("'" + bad + "' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M)");
        }
        assertThat(Capacity.count("1_000_000")).isEqualTo(1_000_000);
        assertThat(Capacity.count("4k")).isEqualTo(4000);
        assertThat(Capacity.count("4Ki")).isEqualTo(4096);
        assertThat(Capacity.count("2G")).isEqualTo(2_000_000_000);
        assertThat(Capacity.count("-1")).isEqualTo(-1);
    }
}
