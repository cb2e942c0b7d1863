package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --threads} above the processors available: one warning line on stderr from every command
 * that takes it (it was bench generate's alone), the run going on; none at the processors' count, and
 * none before a refusal, which stays one line.
 */
class OversubscribedThreadsTest {

    private static final int PROCESSORS = Runtime.getRuntime().availableProcessors();
    /** Above the processors, within the 4 per core allowed. */
    private static final String TOO_MANY = String.valueOf(PROCESSORS + 1);

    private static String warning(String command) {
        return "kvtier: " + command + ": --threads " + TOO_MANY + " is more than the "
                + io.kvtier.text.Plural.count(PROCESSORS, "processor") + " available: the threads take turns, so every"
                + " step is slower than with --threads " + PROCESSORS + " (run anyway)";
    }

    @Test
    void theLineNamesTheCommandAndTheProcessors() {
        assertThat(ThreadsOptions.oversubscribed("generate", 3, 2, "every step is slower", "run anyway"))
                .isEqualTo("kvtier: generate: --threads 3 is more than the 2 processors available: the threads take"
                        + " turns, so every step is slower than with --threads 2 (run anyway)");
        assertThat(ThreadsOptions.oversubscribed("serve", 2, 1, "every step is slower", "run anyway"))
                .contains(" is more than the 1 processor available: ");
        assertThat(ThreadsOptions.oversubscribed("serve", 2, 2, "every step is slower", "run anyway")).isNull();
    }

    @Test
    void generateWarnsOnceAndRuns() {
        CliRun r = CliRun.of("generate", "--threads", TOO_MANY, "--max-tokens", "2", "--prompt", "Once upon a time");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err().lines().filter(warning("generate")::equals)).as(r.err()).hasSize(1);
        CliRun enough = CliRun.of("generate", "--threads", String.valueOf(PROCESSORS), "--max-tokens", "2", "--prompt", "Once");
        assertThat(enough.code()).as(enough.err()).isZero();
        assertThat(enough.err()).doesNotContain("is more than the");
    }

    @Test
    void serveRefusedStartIsOneLineWithoutTheWarning() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            CliRun r = CliRun.of("serve", "--threads", TOO_MANY, "--port", String.valueOf(taken.getLocalPort()));
            assertThat(r.code()).as(r.err()).isEqualTo(2);
            assertThat(r.err().strip().lines()).as(r.err()).hasSize(1).first().asString().contains("cannot listen on");
        }
    }

    /** After the "serving" line, as the README says (trial26: it came before), and after the pool's note. */
    @Test
    void serveWarnsOnceAfterItsServingLineAndThePoolsNote(@TempDir Path dir) throws Exception {
        Path err = dir.resolve("err.txt");
        Process p = ChildCli.start(err, "serve", "--port", "0", "--threads", TOO_MANY, "--device-blocks", "12");
        try {
            p.getInputStream().close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!ChildCli.stderr(err).contains(warning("serve")) && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            java.util.List<String> lines = ChildCli.stderr(err).lines().toList();
            assertThat(lines).as("stderr").filteredOn(warning("serve")::equals).hasSize(1);
            int serving = lines.stream().filter(l -> l.startsWith("kvtier: serving ")).findFirst().map(lines::indexOf).orElse(-1);
            assertThat(serving).as("stderr:\n" + Files.readString(err)).isNotNegative();
            assertThat(lines.subList(serving + 1, lines.size())).as("stderr:\n" + Files.readString(err)).hasSize(2);
            assertThat(lines.get(serving + 1)).startsWith("kvtier: serve: a request can use at most 192 token positions");
            assertThat(lines.get(serving + 2)).isEqualTo(warning("serve"));
            assertThat(ChildCli.terminateWithin(p, 60)).isTrue();
        } finally {
            p.destroyForcibly();
        }
    }
}
