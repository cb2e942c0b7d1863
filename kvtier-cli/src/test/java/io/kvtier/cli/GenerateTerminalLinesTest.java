package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A line on standard error while {@code generate} streams its text (the remote tier's outage
 * line, a disk warning) starts a line of its own on a terminal showing both streams, not glued
 * to the text (a new user's trial: {@code ...with the other dogskvtier: remote tier: ...}).
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
            System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(terminal, true, StandardCharsets.UTF_8));
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
}
