package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code bench generate} on stories260K, briefly: every figure and its fraction of the bound is printed (values not asserted: timing). */
class BenchGenerateCommandTest {

    @Test
    void printsEveryDecodeFigureAsAFractionOfItsBound() {
        CliRun r = CliRun.of("bench", "generate", "--max-tokens", "8", "--max-running", "2", "--repeats", "1",
                "--threads", "2");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("(?m)^read bandwidth: +[\\d.]+ GB/s \\(best of 14 passes of 2 threads over 1\\.0 MB");
        assertThat(r.out()).containsPattern("(?m)^single-sequence decode: +[\\d,]+ tokens/s \\(8 tokens\\) = [\\d.]+ of the bound"
                + " \\(median of 7 steps, each against the read pass before it; quartiles [\\d.]+-[\\d.]+\\)$");
        assertThat(r.out()).containsPattern("(?m)^2-sequence decode: +[\\d,]+ tokens/s \\([\\d.]+x single\\) = [\\d.]+ of the bound"
                + " \\(median of 7 steps");
        assertThat(r.out()).containsPattern("(?m)^prefill: +[\\d,]+ tokens/s \\(511-token prompt\\)$");
    }
}
