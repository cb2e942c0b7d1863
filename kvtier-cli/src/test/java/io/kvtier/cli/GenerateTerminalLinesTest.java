package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A line on standard error while {@code generate} streams its text (the remote tier's outage
 * line, a disk warning) starts a line of its own on a terminal showing both streams, not glued
 * to the text (a new user's trial: {@code ...with the other dogskvtier: remote tier: ...}). With
 * standard output redirected elsewhere, standard error gets the line alone, no blank line before it.
 */
class GenerateTerminalLinesTest {

    private static final String LINE = "kvtier: remote tier: redis://127.0.0.1:6380 stopped answering (unavailable:"
            + " connection refused); lookups miss and writes are dropped until it answers (tried again every 1000 ms)";

    @Test
    void aStderrLineMidStreamStartsItsOwnLine() {
        ByteArrayOutputStream terminal = new ByteArrayOutputStream();
        // Standard output that, once the text is mid-line after the prompt, has a sink print its
        // line as the remote tier's does (System.err at the time of the call, from the run).
        OutputStream stdout = new OutputStream() {
            int writes;

            @Override
            public void write(int b) {
                terminal.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                terminal.write(b, off, len);
                if (++writes == 3 && len > 0 && b[off + len - 1] != '\n') {
                    System.err.println(LINE);
                }
            }
        };
        PrintStream formerOut = System.out;
        PrintStream formerErr = System.err;
        int code;
        try {
            PrintStream both = new PrintStream(stdout, true, StandardCharsets.UTF_8); // one stream: one place
            System.setOut(both);
            System.setErr(both);
            code = Main.run("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                    ReferenceRecords.tokenizer().toString(), "--prompt", "Once upon a time", "--max-tokens", "16");
        } finally {
            System.setOut(formerOut);
            System.setErr(formerErr);
        }
        String shown = terminal.toString(StandardCharsets.UTF_8);
        assertThat(code).as(shown).isZero();
        assertThat(shown.lines()).as(shown).contains(LINE);
        int at = shown.indexOf(LINE);
        assertThat(shown.charAt(at - 1)).isEqualTo('\n');
        assertThat(shown.charAt(at - 2)).as("the text before the line, mid-line when it came").isNotEqualTo('\n');
        assertThat(shown).startsWith("Once upon a time");
    }

    /** Standard output to a file mid-line, standard error to the terminal: the line alone on standard error. */
    @Test
    void aStderrLineMidStreamAddsNothingWhenStdoutGoesElsewhere() {
        assertThat(midLine(false)).containsExactly("Once upon a", LINE + "\n");
    }

    @Test
    void aStderrLineMidStreamEndsTheOpenLineWhereBothShareOnePlace() {
        assertThat(midLine(true)).containsExactly("Once upon a", "\n" + LINE + "\n");
    }

    /** What standard output and standard error got when a line came while the text was mid-line. */
    private static List<String> midLine(boolean shared) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream formerOut = System.out;
        PrintStream formerErr = System.err;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            try (TerminalLines lines = TerminalLines.install(shared)) {
                PrintStream text = new PrintStream(lines.out(), true, StandardCharsets.UTF_8);
                text.print("Once upon a");
                text.flush();
                System.err.println(LINE);
            }
        } finally {
            System.setOut(formerOut);
            System.setErr(formerErr);
        }
        return List.of(out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Where the descriptors lead decides: one file (as {@code > f 2>&1}) or two; unknown counts as one. */
    @Test
    void theDestinationsAreComparedAsFiles(@TempDir Path dir) throws IOException {
        Path text = Files.writeString(dir.resolve("text.txt"), "");
        Path log = Files.writeString(dir.resolve("log.txt"), "");
        Path link = Files.createSymbolicLink(dir.resolve("fd2"), text);
        assertThat(TerminalLines.sameDestination(text, link)).isTrue();
        assertThat(TerminalLines.sameDestination(text, log)).isFalse();
        assertThat(TerminalLines.sameDestination(text, dir.resolve("no-such-fd"))).isTrue();
    }
}
