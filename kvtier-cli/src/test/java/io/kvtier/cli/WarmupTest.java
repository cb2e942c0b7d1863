package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class WarmupTest {

    @Test
    void aWarmUpGeneratesItsTokensThenLeavesNoThreadAndNoTemporaryFileBehind(@TempDir Path cache) throws IOException {
        WarmupFiles files = new WarmupFiles(cache.resolve("warm-up"));
        Warmup w = Warmup.startNew(files);
        int generated = w.finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE);

        assertThat(generated).isEqualTo(Warmup.TOKENS);
        // A new engine per request, as each generate has one: 512 tokens, two requests of 256.
        assertThat(w.engines()).isEqualTo(Warmup.TOKENS / Warmup.TOKENS_PER_REQUEST).isEqualTo(2);
        // Each engine on a thread of its own (as the user's run is on one that never ran a step),
        // the first also running the short prompts (a prefill each) after its long request.
        assertThat(w.engineThreads()).isEqualTo(2);
        assertThat(w.requests()).isEqualTo(2 + Warmup.PREFILLS).isEqualTo(18);
        assertThat(w.directory()).as("no temporary directory: the files are kept").isNull();
        assertThat(files.model()).isRegularFile();
        assertThat(files.tokenizer()).isRegularFile();
        try (Stream<Path> left = Files.list(cache.resolve("warm-up"))) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder(files.model().getFileName().toString(),
                            files.tokenizer().getFileName().toString(), "digests");
        }
    }

    /** Its engines take a default generate's store and load paths (with LRU they did not: duel is the default). */
    @Test
    void theWarmUpsHostTierIsADefaultGeneratesAtItsOwnSize() {
        CommandLine cli = new CommandLine(new Main());
        GenerateCommand generate = cli.parseArgs("generate").subcommand().commandSpec().commandLine().getCommand();
        io.kvtier.engine.OffloadSetup user = generate.offload.setup(generate.eviction, generate.disk, false);

        io.kvtier.engine.OffloadSetup warm = Warmup.hostSetup();
        assertThat(warm.eviction()).isEqualTo(user.eviction()).isEqualTo("duel");
        assertThat(warm.config()).isEqualTo(user.config());
        assertThat(warm.hostBytes()).isEqualTo(16L << 20);
        assertThat(user.hostBytes()).isEqualTo(256L << 20);
    }

    @Test
    void aLaterWarmUpReusesTheKeptFilesAndTheirDigest(@TempDir Path cache) throws IOException {
        WarmupFiles files = new WarmupFiles(cache.resolve("warm-up"));
        Warmup.startNew(files).finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE);
        FileTime modelWritten = Files.getLastModifiedTime(files.model());
        FileTime tokenizerWritten = Files.getLastModifiedTime(files.tokenizer());

        assertThat(files.ensure()).as("both files already there").isTrue();
        Warmup second = Warmup.startNew(files);
        assertThat(second.finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE)).isEqualTo(Warmup.TOKENS);

        assertThat(Files.getLastModifiedTime(files.model())).isEqualTo(modelWritten);
        assertThat(Files.getLastModifiedTime(files.tokenizer())).isEqualTo(tokenizerWritten);
        try (Stream<Path> digests = Files.list(cache.resolve("warm-up").resolve("digests"))) {
            assertThat(digests.filter(p -> p.toString().endsWith(".digest"))).as("one digest entry, hashed once").hasSize(1);
        }
        assertThat(files.digests().sha256(files.model(), mapped(files.model()))).hasSize(64);
        assertThat(files.digests().computed()).as("the digest is remembered").isZero();
    }

    @Test
    void aKeptModelTheWarmUpFailsOnIsWrittenAgainByTheNextStart(@TempDir Path cache) throws IOException {
        WarmupFiles files = new WarmupFiles(cache.resolve("warm-up"));
        files.ensure();
        Files.write(files.model(), new byte[] {1, 2, 3}); // truncated: no model header

        Warmup broken = Warmup.startNew(files);
        assertThat(broken.finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE)).isZero();
        assertThat(files.model()).as("forgotten").doesNotExist();

        assertThat(Warmup.startNew(files).finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE)).isEqualTo(Warmup.TOKENS);
        assertThat(Files.size(files.model())).isGreaterThan(1_000_000);
    }

    @Test
    void withoutAWritableCacheTheFilesGoToATemporaryDirectoryThatIsDeleted(@TempDir Path tmp) throws IOException {
        Path notADirectory = Files.writeString(tmp.resolve("file"), "x");
        Warmup w = Warmup.startNew(new WarmupFiles(notADirectory.resolve("warm-up")));

        assertThat(w.finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE)).isEqualTo(Warmup.TOKENS);
        assertThat(w.directory()).isNotNull();
        assertThat(Files.exists(w.directory())).as("temporary model directory %s deleted", w.directory()).isFalse();
    }

    /**
     * The warm-up's text goes through a chain built as standard output's, down to a file stream on
     * the null device: writes and flushes get through (a print stream hides an I/O error until
     * {@code checkError}), as a streamed token's do, and closing it closes the file.
     */
    @Test
    void theWarmUpsStandardOutputTakesTextAndFlushesWithoutError() {
        java.io.PrintStream out = Warmup.discardingStdout();
        for (int i = 0; i < 300; i++) {
            out.print("token " + i + " \u00e9");   // past a buffer, with a two-byte character
            out.flush();
        }
        assertThat(out.checkError()).isFalse();
        out.close();
        out.print("after close");
        assertThat(out.checkError()).as("closed: a write now fails").isTrue();
    }

    @Test
    void aSmallJobDoesNotWaitButStopsTheWarmUp(@TempDir Path cache) throws InterruptedException {
        Warmup w = Warmup.startNew(new WarmupFiles(cache.resolve("warm-up")));
        w.finish(Warmup.MIN_TOKENS_TO_WAIT - 1, Long.MAX_VALUE);
        w.awaitEnd();

        // Stopped at its next stage or step: nowhere near its tokens.
        assertThat(w.finish(Warmup.MIN_TOKENS_TO_WAIT - 1, 0)).isLessThan(Warmup.TOKENS);
    }

    @Test
    void aStopRequestedEndsTheWaitAndStopsTheWarmUp(@TempDir Path cache) {
        Warmup w = Warmup.startNew(new WarmupFiles(cache.resolve("warm-up")));

        // A job large enough to wait, without a deadline: only the stop request ends the wait.
        assertThat(w.finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE, () -> true)).isLessThan(Warmup.TOKENS);
        assertThat(w.finish(Warmup.MIN_TOKENS_TO_WAIT, 0)).as("stopped, not waited for").isLessThan(Warmup.TOKENS);
    }

    private static java.lang.foreign.MemorySegment mapped(Path file) throws IOException {
        return java.lang.foreign.MemorySegment.ofArray(Files.readAllBytes(file));
    }

    @Test
    void theWarmUpRunsAtTheThreadCountOfTheCommandLine() {
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads", "1", "--prompt", "x"})).isEqualTo(1);
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads=3"})).isEqualTo(3);
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads", "2", "--threads", "1"})).isEqualTo(1);
        assertThat(Warmup.threadsOf(new String[] {"generate", "--prompt", "x"})).isZero();
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads", "many"})).isZero();
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads"})).isZero();
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads", "-2"})).isZero();
        int most = 4 * Runtime.getRuntime().availableProcessors();
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads", Integer.toString(most)})).isEqualTo(most);
        assertThat(Warmup.threadsOf(new String[] {"generate", "--threads", Integer.toString(most + 1)})).as("refused by the parser")
                .isZero();
    }
}
