package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Sizes in bytes are digits, a fraction, a unit and a B, nothing else: {@code 1e3} was 1,000 bytes
 * (Double.parseDouble's scientific notation), {@code 1d} one byte, {@code 0x1p10} 1,024.
 */
class SizesTest {

    @Test
    void aSizeIsDigitsAFractionAUnitAndAB() {
        assertThat(Sizes.parseBytes("256m", "--x")).isEqualTo(256L << 20);
        assertThat(Sizes.parseBytes("1gib", "--x")).isEqualTo(1L << 30);
        assertThat(Sizes.parseBytes("4096B", "--x")).isEqualTo(4096);
        assertThat(Sizes.parseBytes("1.0001K", "--x")).as("rounded down with a unit").isEqualTo(1024);
        assertThat(Sizes.parseBytes(" 1M ", "--x")).isEqualTo(1L << 20);
        assertThat(Sizes.parseBytes("1024T", "--x")).isEqualTo(1L << 50);
    }

    @Test
    void scientificNotationAndOtherNumberSpellingsAreRefusedInOneLine() {
        for (String bad : new String[] {"1e3", "1E3", "1e3M", "1.5e2K", "0x10", "0x1p10", "1d", "1f", "+1M", "-1M", ".5G", "1.G",
            "1 M", "1_000", "Infinity", "NaN", "1iB", "K", ""}) {
            assertThatThrownBy(() -> Sizes.parseBytes(bad, "--host-cache-bytes")).as(bad).isInstanceOf(BadInputException.class)
                    .hasMessage("--host-cache-bytes: '" + bad + "' is not a size (e.g. 4096, 256M, 1.5G, 1GiB)");
        }
    }

    @Test
    void aSizeBeyondOnePebibyteIsRefused() {
        assertThatThrownBy(() -> Sizes.parseBytes("1025T", "--disk-cache-bytes")).hasMessage("--disk-cache-bytes: '1025T' is too large (at most 1024T, 1 PiB)");
        assertThatThrownBy(() -> Sizes.parseBytes("99999999999999999999999", "--disk-cache-bytes"))
                .hasMessage("--disk-cache-bytes: '99999999999999999999999' is too large (at most 1024T, 1 PiB)");
    }

    @Test
    void theCommandSaysItInOneLineNamingTheFlag() {
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1e3"),
                "--host-cache-bytes: '1e3' is not a size (e.g. 4096, 256M, 1.5G, 1GiB)");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--max-body-bytes", "2e6"),
                "--max-body-bytes: '2e6' is not a size (e.g. 4096, 256M, 1.5G, 1GiB)");
    }
}
