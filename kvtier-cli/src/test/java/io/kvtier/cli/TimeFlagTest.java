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
        assertThat(new TimeFlag.Millis().convert("99999999999999999999")).as("past a long: the most, for the range check")
                .isEqualTo(Duration.ofMillis(Long.MAX_VALUE));
        assertThat(new TimeFlag.Millis().convert("-99999999999999999999")).isEqualTo(Duration.ofMillis(Long.MIN_VALUE));
    }

    @Test
    void aWrongTimeIsOneLineNamingTheFlag() {
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--shutdown-grace", "5x"),
                "--shutdown-grace: '5x' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is seconds)");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--remote-timeout", "1e3"),
                "--remote-timeout: '1e3' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is milliseconds)");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--shutdown-grace", "-500ms"),
                "--shutdown-grace must be between 0s and 86400s (1 day), got -500ms");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--remote-url",
                "redis://127.0.0.1:1", "--remote-timeout", "0s"), "--remote-timeout must be between 1ms and 86400s (1 day), got 0s");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "offload", "--seconds-per-size", "0ms"),
                "--seconds-per-size must be between 1ms and 3600s (1 hour), got 0ms");
    }

    @Test
    void microsecondsAreAUnitAndAFlagKeepingMillisecondsTakesThemInWholeMilliseconds() {
        assertThat(new TimeFlag.Millis().convert("2000us")).isEqualTo(Duration.ofMillis(2));
        assertThat(new TimeFlag.Seconds().convert("500000us")).isEqualTo(Duration.ofMillis(500));
        assertThatThrownBy(() -> new TimeFlag.Millis().convert("1500us")).hasMessage("'1500us' is 1.5 ms, not a whole number of milliseconds");
        assertThatThrownBy(() -> new TimeFlag.Millis().convert("1US")).hasMessage("'1US' is not a time (e.g. 500ms, 2s, 1.5s; "
                + "a plain number is milliseconds)");
    }

    /** replay's cost-model times keep nanoseconds (its virtual clock's tick); a plain number is the unit in the flag's name. */
    @Test
    void costModelTimesAreKeptToTheNanosecond() {
        TimeFlag ms = new TimeFlag.CostMillis();
        TimeFlag us = new TimeFlag.CostMicros();
        assertThat(ms.convert("5.99")).isEqualTo(Duration.ofNanos(5_990_000));
        assertThat(ms.convert("500us")).isEqualTo(Duration.ofNanos(500_000));
        assertThat(ms.convert("0.000001")).isEqualTo(Duration.ofNanos(1));
        assertThat(us.convert("10")).isEqualTo(Duration.ofNanos(10_000));
        assertThat(us.convert("0.5")).isEqualTo(Duration.ofNanos(500));
        assertThat(us.convert("0.2ms")).isEqualTo(Duration.ofNanos(200_000));
        assertThat(us.convert("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThatThrownBy(() -> us.convert("0.0005")).hasMessage("'0.0005' is 0.5 ns, not a whole number of nanoseconds");
        assertThatThrownBy(() -> ms.convert("1e3")).hasMessage("'1e3' is not a time (e.g. 6ms, 500us, 0.5ms; a plain number is "
                + "milliseconds)");
        assertThat(us.convert("9999999999999999")).as("beyond 2^63 ns: the most").isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
        assertThat(TimeFlag.shown(Duration.ofNanos(5_990_000), TimeFlag.Unit.MILLIS)).isEqualTo("5.99");
        assertThat(TimeFlag.shown(Duration.ofNanos(-1000), TimeFlag.Unit.MICROS)).isEqualTo("-1");
    }

    /** Replay's cost-model times take the grammar, and reach the cost model as given (its JSON record's figures in ns). */
    @Test
    void replaysCostModelTimesTakeTheGrammar() throws Exception {
        Path json = dir.resolve("r.json");
        CliRun r = TraceFiles.replayTwoRequests(dir, "--weight-read-ms", "6ms", "--step-overhead-ms", "250us",
                "--host-latency-us", "0.5ms", "--stats-json", json.toString());
        assertThat(r.code()).as(r.err()).isZero();
        var cost = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile()).get("cost_model");
        assertThat(cost.get("weight_read_ns").asDouble()).isEqualTo(6e6);
        assertThat(cost.get("step_overhead_ns").asDouble()).isEqualTo(250e3);
        assertThat(cost.get("host_latency_ns").asDouble()).isEqualTo(500e3);
        GgufCliErrorsTest.assertOneLineError(TraceFiles.replayTwoRequests(dir, "--weight-read-ms", "1e3"),
                "--weight-read-ms: '1e3' is not a time (e.g. 6ms, 500us, 0.5ms; a plain number is milliseconds)");
        GgufCliErrorsTest.assertOneLineError(TraceFiles.replayTwoRequests(dir, "--host-latency-us", "0.0001"),
                "--host-latency-us: '0.0001' is 0.1 ns, not a whole number of nanoseconds");
        GgufCliErrorsTest.assertOneLineError(TraceFiles.replayTwoRequests(dir, "--step-overhead-ms", "-500us"),
                "--step-overhead-ms must be between 0s and 86400s (1 day), got -500us");
        GgufCliErrorsTest.assertOneLineError(TraceFiles.replayTwoRequests(dir, "--remote-cache-tokens", "1M",
                "--remote-latency-us", "10000000000000000"), "--remote-latency-us must be between 0s and 86400s (1 day), got 10000000000000000us");
    }

    /**
     * A new user's trial: the time flags' range checks said the same thing three ways ("must be in
     * 0..86400 seconds", "must be between 0 and 86400 seconds", "between 1 ms and a day (86400000
     * ms)"). Each now says it in one form: the flag, its range in the grammar's units, the value as
     * given (a plain number with the flag's own unit).
     */
    @Test
    void everyTimeFlagsRangeIsOneLineOfOneForm() throws Exception {
        String day = " must be between 0s and 86400s (1 day), got ";
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--shutdown-grace", "86401"), "--shutdown-grace" + day + "86401s");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--disk-cache-dir",
                dir.resolve("kv").toString(), "--disk-scan-wait=-1ms"), "--disk-scan-wait" + day + "-1ms");
        String[] remote = {"generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--remote-url", "redis://127.0.0.1:1"};
        GgufCliErrorsTest.assertOneLineError(CliRun.of(concat(remote, "--remote-breaker-open", "-1")), "--remote-breaker-open" + day
                + "-1ms");
        GgufCliErrorsTest.assertOneLineError(CliRun.of(concat(remote, "--remote-timeout", "25h")),
                "--remote-timeout: '25h' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is milliseconds)");
        GgufCliErrorsTest.assertOneLineError(CliRun.of(concat(remote, "--remote-timeout", "86400001")),
                "--remote-timeout must be between 1ms and 86400s (1 day), got 86400001ms");
        GgufCliErrorsTest.assertOneLineError(CliRun.of(concat(remote, "--remote-ttl", "31536001s")),
                "--remote-ttl must be 0 (no expiry) or between 2s and 31536000s (365 days), got 31536001s");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "offload", "--seconds-per-size", "3600.001"),
                "--seconds-per-size must be between 1ms and 3600s (1 hour), got 3600.001s");
        GgufCliErrorsTest.assertOneLineError(TraceFiles.replayTwoRequests(dir, "--weight-read-ms", "-0.5us"),
                "--weight-read-ms must be between 0s and 86400s (1 day), got -0.5us");
        GgufCliErrorsTest.assertOneLineError(TraceFiles.replayTwoRequests(dir, "--remote-cache-tokens", "1M", "--remote-latency-us",
                "-3"), "--remote-latency-us must be between 0s and 86400s (1 day), got -3us");
    }

    /**
     * A new user's trial: {@code --remote-ttl 1ms} was taken, and every chunk expired while the tier
     * still trusted it was stored (2 s after its write: its lookups hit nothing, its writes were
     * skipped as done). Below that trust it is refused; 0 (no expiry) and 2s are taken.
     */
    @Test
    void aRemoteTtlShorterThanTheTiersTrustInAWriteIsRefused() {
        String[] remote = {"generate", "--prompt", "hi", "--max-tokens", "1", "--host-cache-bytes", "1M", "--remote-url",
            "redis://127.0.0.1:1", "--remote-timeout", "100"};
        String range = "--remote-ttl must be 0 (no expiry) or between 2s and 31536000s (365 days), got ";
        GgufCliErrorsTest.assertOneLineError(CliRun.of(concat(remote, "--remote-ttl", "1ms")), range + "1ms");
        GgufCliErrorsTest.assertOneLineError(CliRun.of(concat(remote, "--remote-ttl", "1.999")), range + "1.999s");
        assertThat(io.kvtier.engine.OffloadSetup.REMOTE_HINT_TTL).isEqualTo(Duration.ofSeconds(2));
        CliRun atTheBound = CliRun.of(concat(remote, "--remote-ttl", "2000ms"));
        assertThat(atTheBound.code()).as(atTheBound.err()).isZero();
    }

    /** The range's bounds in the grammar: the largest unit that leaves a whole part. */
    @Test
    void aTimeIsSpelledInTheLargestUnitWithAWholePart() {
        assertThat(TimeFlag.spelled(Duration.ofDays(1))).isEqualTo("86400s");
        assertThat(TimeFlag.spelled(Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThat(TimeFlag.spelled(Duration.ofMillis(-500))).isEqualTo("-500ms");
        assertThat(TimeFlag.spelled(Duration.ofNanos(1500))).isEqualTo("1.5us");
        assertThat(TimeFlag.spelled(Duration.ofNanos(-1))).isEqualTo("-1ns");
        assertThat(TimeFlag.spelled(Duration.ZERO)).isEqualTo("0s");
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
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
