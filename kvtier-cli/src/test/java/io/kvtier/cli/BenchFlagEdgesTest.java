package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Flag combinations of the bench commands a new user tried: each ends, or is refused in one line. */
class BenchFlagEdgesTest {

    private static void assertOneLineExit2(CliRun r, String message) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).hasSize(1);
        assertThat(r.err().strip()).isEqualTo("kvtier: " + message);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void schedulerRefusesABudgetThatCannotDecodeEveryRunningRequest() {
        assertOneLineExit2(CliRun.of("bench", "scheduler", "--max-running", "16", "--max-batch-tokens", "15", "--steps", "5",
                        "--repeats", "1"),
                "--max-batch-tokens 15 is below --max-running 16: each measured step decodes one token of every running request");
        // The default budget (8192) counts too.
        assertOneLineExit2(CliRun.of("bench", "scheduler", "--max-running", "9000", "--steps", "5", "--repeats", "1"),
                "--max-batch-tokens 8192 is below --max-running 9000: each measured step decodes one token of every running request");
    }

    /** Was: the prefill loop spun at 100% CPU with no output (the first requests finished while the last prefilled). */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void schedulerWithABudgetEqualToTheBatchEnds() {
        CliRun r = CliRun.of("bench", "scheduler", "--max-running", "32", "--max-batch-tokens", "32", "--prompt-tokens", "256",
                "--steps", "20", "--repeats", "1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("scheduler: 32 running requests, 256-token prompts", "32 tokens per step");
    }

    /** A count of one is singular (a new user's trial: "median of 1 steps", "1 chunks stored"). */
    @Test
    void schedulerSaysOneRunningRequest() {
        CliRun r = CliRun.of("bench", "scheduler", "--max-running", "1", "--prompt-tokens", "16", "--steps", "5", "--repeats", "1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("scheduler: 1 running request, 16-token prompts");
    }

    /** Was: ArrayIndexOutOfBoundsException in the median of no timed decode steps, after half the figures. */
    @Test
    void generateRefusesFewerThanTwoTokensBeforeAnyFigure() {
        assertOneLineExit2(CliRun.of("bench", "generate", "--max-tokens", "1", "--repeats", "1"),
                "--max-tokens must be at least 2, got 1: decode is timed from the second token (the first comes with the"
                        + " prompt's step)");
    }

    @Test
    void generateTimesTwoTokensAsOneDecodeStep() {
        CliRun r = CliRun.of("bench", "generate", "--max-tokens", "2", "--max-running", "2", "--repeats", "1", "--threads", "1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("(?m)^single-sequence decode: .* \\(2 tokens\\) = [\\d.]+ of the bound \\(median of 1 step,")
                .containsPattern("(?m)^read bandwidth: .* \\(best of 2 passes of 1 thread over ");
    }

    /** Was: "lower --max-running" for a run whose prompts, not its batch, were too large. */
    @Test
    void schedulerMemoryAdviceNamesWhatSizesTheBench() {
        CommandLine cli = new CommandLine(new Main());
        cli.parseArgs("bench", "scheduler", "--prompt-tokens", "10000000");
        assertThat(Main.memoryAdvice(cli)).isEqualTo("; lower --prompt-tokens, --max-running or --steps (the bench holds"
                + " --max-running requests of --prompt-tokens plus about --steps positions each)");
        CommandLine generate = new CommandLine(new Main());
        generate.parseArgs("bench", "generate");
        assertThat(Main.memoryAdvice(generate)).isEqualTo("; lower --block-size, --max-running or the model size");
    }
}
