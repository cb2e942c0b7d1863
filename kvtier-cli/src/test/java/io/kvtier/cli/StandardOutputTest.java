package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A new user's trial: {@code generate >/dev/full} exited 141 with nothing on standard error, as for
 * a reader gone. A closed pipe keeps its quiet 141; any other write error is one line and status 1.
 */
class StandardOutputTest {

    @AfterEach
    void forget() {
        StandardOutput.reset();
    }

    /** A stand-in for a descriptor whose writes fail with {@code message}, as the JDK words errno. */
    private static OutputStream failing(String message) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException(message);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                throw new IOException(message);
            }
        };
    }

    private static String statusLine(String message) {
        PrintStream out = new PrintStream(new StandardOutput(failing(message)), true, StandardCharsets.UTF_8);
        out.print("Once upon a time");
        out.flush();
        assertThat(out.checkError()).isTrue();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = StandardOutput.statusOfFailedOutput(new PrintStream(err, true, StandardCharsets.UTF_8));
        return status + " " + err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aFullDeviceIsOneLineAndStatusOne() {
        assertThat(statusLine("No space left on device")).isEqualTo("1 kvtier: cannot write standard output: No space left on device"
                + System.lineSeparator());
    }

    @Test
    void aClosedPipeIsQuietAndStatus141() {
        assertThat(statusLine("Broken pipe")).isEqualTo("141 ");
    }

    @Test
    void theFirstFailureIsKeptAndRethrown() {
        StandardOutput s = new StandardOutput(failing("Input/output error"));
        assertThatThrownBy(() -> s.write(new byte[] {'a'}, 0, 1)).hasMessage("Input/output error");
        assertThat(StandardOutput.failure()).isEqualTo("Input/output error");
    }

    /** A command that returned 0 with its output lost exits 1 with the cause (bench and --help said 0); other codes stand. */
    @Test
    void aSucceededCommandWhoseOutputFailedDoesNotExitZero() {
        PrintStream out = new PrintStream(new StandardOutput(failing("No space left on device")), true, StandardCharsets.UTF_8);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        assertThat(Main.exitStatus(0, new PrintStream(new ByteArrayOutputStream()), errStream)).isZero();
        out.println("single-sequence decode: 12,563 tokens/s");
        assertThat(Main.exitStatus(2, out, errStream)).isEqualTo(2);
        assertThat(err.size()).isZero();
        assertThat(Main.exitStatus(0, out, errStream)).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo("kvtier: cannot write standard output: No space left on device" + System.lineSeparator());
    }

    @Test
    void anUnknownCauseIsTheQuiet141() {
        assertThat(StandardOutput.statusOfFailedOutput(new PrintStream(new ByteArrayOutputStream()))).isEqualTo(141);
    }
}
