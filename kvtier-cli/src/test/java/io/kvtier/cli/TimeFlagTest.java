package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Every flag that takes a time takes one grammar: {@code --remote-timeout} took milliseconds
 * ("MS"), {@code --remote-ttl}, {@code --shutdown-grace} and {@code --disk-scan-wait} seconds, each
 * as a bare number; now {@code 500ms} and {@code 2s} everywhere, a bare number in the flag's old unit.
 */
class TimeFlagTest {

    @TempDir
    Path dir;

    @Test
    void aUnitSaysItselfAndAPlainNumberIsTheFlagsOwnUnit() {
        TimeFlag ms = new TimeFlag.Millis();
        TimeFlag s = new TimeFlag.Seconds();
        assertThat(ms.convert("500")).isEqualTo(Duration.ofMillis(500));
        assertThat(s.convert("10")).isEqualTo(Duration.ofSeconds(10));
        for (TimeFlag c : new TimeFlag[] {ms, s}) {
            assertThat(c.convert("500ms")).isEqualTo(Duration.ofMillis(500));
            assertThat(c.convert("2s")).isEqualTo(Duration.ofSeconds(2));
            assertThat(c.convert("1.5s")).isEqualTo(Duration.ofMillis(1500));
            assertThat(c.convert("0")).isEqualTo(Duration.ZERO);
            assertThat(c.convert("-1s")).as("the flag's own range check refuses it in its words").isEqualTo(Duration.ofSeconds(-1));
        }
        assertThat(s.convert("0.25")).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void anythingElseIsRefusedSayingWhy() {
        for (String bad : new String[] {"5x", "", "s", "1e3", "1S", "1MS", "1 s", "1m", "1h", ".5s", "1.s", "+1s", "1,5s"}) {
            assertThatThrownBy(() -> new TimeFlag.Millis().convert(bad)).as(bad).isInstanceOf(CommandLine.TypeConversionException.class)
                    .hasMessage("'" + bad + "' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is milliseconds)");
        }
        assertThatThrownBy(() -> new TimeFlag.Seconds().convert("1h")).hasMessage("'1h' is not a time (e.g. 500ms, 2s, 1.5s; "
                + "a plain number is seconds)");
        assertThatThrownBy(() -> new TimeFlag.Seconds().convert("0.0005")).as("not cut to 0")
                .hasMessage("'0.0005' is 0.5 ms, not a whole number of milliseconds");
        assertThatThrownBy(() -> new TimeFlag.Millis().convert("1.5")).hasMessage("'1.5' is 1.5 ms, not a whole number of milliseconds");
        assertThatThrownBy(() -> new TimeFlag.Millis().convert("99999999999999999999")).hasMessage("'99999999999999999999' is too long a time");
    }

    @Test
    void aWrongTimeIsOneLineNamingTheFlag() {
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--shutdown-grace", "5x"),
                "--shutdown-grace: '5x' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is seconds)");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--remote-timeout", "1e3"),
                "--remote-timeout: '1e3' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is milliseconds)");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--shutdown-grace", "-500ms"),
                "--shutdown-grace must be in 0..86400 seconds, got -0.5");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--remote-url",
                "redis://127.0.0.1:1", "--remote-timeout", "0s"), "--remote-timeout must be between 1 ms and a day (86400000 ms), got 0 ms");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "offload", "--seconds-per-size", "0ms"),
                "--seconds-per-size must be a positive number, got 0");
    }

    /** The default given in other words is still the default: it needs no partner flag. */
    @Test
    void theDefaultInAnotherUnitNeedsNoPartner() {
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--disk-scan-wait", "5"),
                "--disk-scan-wait needs --disk-cache-dir");
        CliRun r = CliRun.of("generate", "--prompt", "hi", "--max-tokens", "1", "--disk-scan-wait", "10000ms");
        assertThat(r.code()).as(r.err()).isZero();
    }
}
