package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench generate} on stories260K, briefly: every figure, its fraction of the bound and the threads' scaling are printed (values not asserted: timing; the scaling arithmetic is BandwidthBoundTest's). */
class BenchGenerateCommandTest {

    /**
     * The bench with one warm-up run per figure ({@code kvtier.bench.warmupMaxMillis=0}): its lines are
     * this test's, the warm-up's schedule JitWarmUpTest's (with the default, 2 s and more a figure, this class took 37 s).
     */
    private static CliRun bench(String... args) {
        System.setProperty("kvtier.bench.warmupMaxMillis", "0");
        try {
            return CliRun.of(args);
        } finally {
            System.clearProperty("kvtier.bench.warmupMaxMillis");
        }
    }

    @Test
    void printsEveryDecodeFigureAsAFractionOfItsBound() {
        CliRun r = bench("bench", "generate", "--max-tokens", "8", "--max-running", "2", "--repeats", "1",
                "--threads", "2");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("(?m)^read bandwidth: +[\\d.]+ GB/s \\(best of 14 passes of 2 threads over 1\\.0 MB");
        assertThat(r.out()).containsPattern("(?m)^copy bandwidth: +[\\d.]+ GB/s \\(best of 30 copies spread over the run, of those 1\\.0 MB on 2 threads,"
                + " bytes copied per second; STREAM's Copy counts each twice\\): single-sequence decode = [\\d.]+ of the copy bound"
                + " \\([\\d,]+ tokens/s: the weights' bytes per token at this bandwidth; decode without the read passes\\)$");
        assertThat(r.out()).containsPattern("(?m)^single-sequence decode: +[\\d,]+ tokens/s \\(8 tokens\\) = [\\d.]+ of the bound"
                + " \\(median of 7 steps, each against the read pass before it; quartiles [\\d.]+-[\\d.]+"
                + "(; above 1\\.2: not a measurement, see the note)?\\); [\\d,]+ tokens/s without the read passes$");
        // at 2 threads: what the ratio is at 1 thread, and the target, never beside a figure of the other count
        assertThat(r.out()).containsPattern("(?m)^2-sequence decode: +[\\d,]+ tokens/s \\([\\d.]+x single\\) = [\\d.]+ of the bound"
                + " \\(median of 7 steps.*\\); at 1 thread about [\\d.]+x \\(x read [\\d.]+ / compute [\\d.]+\\);"
                + " kvtier's target 8x single at 1 and at 2 threads$");
        assertThat(r.out()).containsPattern("(?m)^warm-up: +single [\\d.]+ s( \\(still compiling\\))?, 2 sequences [\\d.]+ s( \\(still compiling\\))?,"
                + " prefill [\\d.]+ s( \\(still compiling\\))? \\(the same work, at least 0 s, then until 0.5 s of whole runs passed with no JIT"
                + " compilation or the next run would end past 0 s at the longest run's time\\)$");
        assertThat(r.out()).containsPattern("(?m)^threads 1 -> 2: +compute [\\d.]+x \\([\\d.]+ -> [\\d.]+ G multiply-adds/s,"
                + " FMA chains in registers\\), read bandwidth [\\d.]+x \\([\\d.]+ -> [\\d.]+ GB/s\\); each from the round of median"
                + " ratio of 9 rounds, A B A B$");
        assertThat(r.out()).containsPattern("(?m)^prefill: +[\\d,]+ tokens/s \\(511-token prompt\\)$");
    }

    /** The smallest vocabulary make-model writes (259): the bench's made-up prompts stay inside it. */
    @Test
    void runsOnTheSmallestVocabularyMakeModelWrites(@TempDir Path dir) {
        CliRun r = benchOneThread(tinyModel(dir.resolve("tiny.bin"), 600), 4);
        assertThat(r.out()).containsPattern("(?m)^prefill: +[\\d,]+ tokens/s \\(512-token prompt\\)$");
        // One thread is one, not "1 threads" (a new user's trial: "median of 1 steps" and the like)
        assertThat(r.out()).containsPattern("(?m)^model tiny.bin: .*, 1 compute thread$")
                .containsPattern("(?m)^read bandwidth: +[\\d.]+ GB/s \\(best of \\d+ passes of 1 thread over ")
                .containsPattern("(?m)^copy bandwidth: .* on 1 thread, bytes copied per second");
        // at 1 thread: what the ratio is at 2 threads, from the scaling measured against 2
        assertThat(r.out()).containsPattern("(?m)^2-sequence decode: .*; at 2 threads about [\\d.]+x \\(x compute [\\d.]+ / read [\\d.]+\\);"
                + " kvtier's target 8x single at 1 and at 2 threads$");
        assertThat(r.out()).containsPattern("(?m)^threads 1 -> 2: +compute [\\d.]+x");
        assertThat(BenchGenerateCommand.syntheticToken(257, 500, 259)).isEqualTo(258);
        assertThat(BenchGenerateCommand.syntheticToken(258, 500, 259)).isEqualTo(1);
        assertThat(BenchGenerateCommand.syntheticToken(499, 500, 32000)).isEqualTo(500);
    }

    /** --max-tokens past the context is cut to what the context leaves, with a note saying so (it was cut silently). */
    @Test
    void maxTokensPastTheContextIsCutWithANote(@TempDir Path dir) {
        CliRun r = benchOneThread(tinyModel(dir.resolve("short.bin"), 8), 20);
        assertThat(r.err()).contains("kvtier: note: --max-tokens 20 is more than the model's context of 8 positions leaves"
                + " after the 1-token prompt; each sequence decodes 7 tokens");
        assertThat(r.out()).containsPattern("(?m)^single-sequence decode: +[\\d,]+ tokens/s \\(7 tokens\\)");
    }

    /** A make-model checkpoint of width 16, one layer, the smallest vocabulary (259) and a context of {@code seqLen}. */
    private static Path tinyModel(Path model, int seqLen) {
        CliRun made = CliRun.of("make-model", model.toString(), "--dim", "16", "--hidden-dim", "32", "--layers", "1",
                "--heads", "2", "--kv-heads", "2", "--vocab", "259", "--seq-len", String.valueOf(seqLen));
        assertThat(made.code()).as(made.err()).isZero();
        return model;
    }

    /** {@code bench generate} of {@code model}, 2 sequences, 1 repeat, 1 thread; it must succeed. */
    private CliRun benchOneThread(Path model, int maxTokens) {
        CliRun r = bench("bench", "generate", "--model", model.toString(), "--max-tokens", String.valueOf(maxTokens),
                "--max-running", "2", "--repeats", "1", "--threads", "1");
        assertThat(r.code()).as(r.err()).isZero();
        return r;
    }

    /** More threads than processors: one warning line (the run goes on), none at or below the count. */
    @Test
    void moreThreadsThanProcessorsIsOneWarningNotARefusal() {
        assertThat(ThreadsOptions.oversubscribed("bench generate", 3, 2, BenchGenerateCommand.SLOWER, BenchGenerateCommand.ANYWAY))
                .isEqualTo("kvtier: bench generate: --threads 3 is more than the 2 processors available: the threads take"
                        + " turns, so the figures are slower and noisier than with --threads 2 (measured anyway)");
        assertThat(ThreadsOptions.oversubscribed("bench generate", 2, 2, BenchGenerateCommand.SLOWER, BenchGenerateCommand.ANYWAY)).isNull();
    }
}
