package io.kvtier.cli;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Keeps {@code generate}'s standard error lines off its streamed text. The text streams on
 * standard output token by token, so it is mid-line most of the time; a line on standard error
 * then (the remote tier's "stopped answering", a disk warning, a log record) would be glued to
 * it on a terminal showing both ({@code ...with the other dogskvtier: remote tier: ...}, a new
 * user's trial). Standard output here remembers whether its last byte ended a line, and
 * standard error, before writing, ends that line first. Standard error is replaced for the run,
 * not handed to each sink: the sinks print to {@code System.err} when they are called, from any
 * thread. Only where the two streams reach one place (a terminal, a file or pipe given both):
 * with standard output redirected elsewhere its open line glues to nothing, and a break would be
 * a stray blank line on standard error. The text on standard output is unchanged either way.
 */
final class TerminalLines implements AutoCloseable {

    private final Object lock = new Object();
    private final OutputStream out;
    private final PrintStream formerErr;
    /** Whether the two streams reach one place, so that standard error ends standard output's open line. */
    private final boolean shared;
    /** Whether standard output's last byte was not a line end (written under {@link #lock}). */
    private boolean outMidLine;

    private TerminalLines(OutputStream out, PrintStream err, boolean shared) {
        this.out = out;
        this.formerErr = err;
        this.shared = shared;
    }

    /**
     * Tracks {@code System.out} and routes {@code System.err} through the line check until {@link #close}.
     * Whether the two streams reach one place: as the launcher tells ({@code kvtier.streamsShared}: the
     * JVM's standard error is the launcher's filter's pipe), else where this process's descriptors lead.
     */
    static TerminalLines install() {
        String told = System.getProperty("kvtier.streamsShared");
        return install(told != null ? !told.equals("false")
                : System.out == System.err || sameDestination(Path.of("/dev/fd/1"), Path.of("/dev/fd/2")));
    }

    /** {@link #install()} with {@code shared} told: whether standard output and standard error reach one place. */
    static TerminalLines install(boolean shared) {
        TerminalLines lines = new TerminalLines(System.out, System.err, shared);
        System.setErr(new PrintStream(lines.new Err(lines.formerErr), true, lines.formerErr.charset()));
        return lines;
    }

    /**
     * Whether the two descriptors' paths ({@code /dev/fd/1} and {@code /dev/fd/2}) are one file,
     * terminal or pipe; true when that cannot be told (no {@code /dev/fd}): a break where none was
     * needed is a blank line, a missing one glues a line to the text.
     */
    static boolean sameDestination(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (IOException | SecurityException e) {
            return true;
        }
    }

    /** Standard output for the run's text: its bytes are tracked on their way to {@code System.out}. */
    OutputStream out() {
        return new Side(out) {
            @Override
            void pass(byte[] b, int off, int len) throws IOException {
                outMidLine = b[off + len - 1] != '\n';
                out.write(b, off, len);
            }

            /** A closed standard output (| head) surfaces as the run's PrintStream's error, as it did unwrapped. */
            @Override
            public void flush() throws IOException {
                out.flush();
                if (out instanceof PrintStream ps && ps.checkError()) {
                    throw new IOException("standard output is closed");
                }
            }
        };
    }

    /** Standard error that first ends the line standard output left open. */
    private final class Err extends Side {
        Err(OutputStream err) {
            super(err);
        }

        @Override
        void pass(byte[] b, int off, int len) throws IOException {
            if (outMidLine && shared) {
                // The break goes to standard error: the text on standard output stays as generated.
                TerminalLines.this.out.flush(); // the text's bytes reach the terminal before the break that follows them
                out.write('\n');
                outMidLine = false;
            }
            out.write(b, off, len);
        }
    }

    /** One of the two streams: its bytes, never empty, passed on under {@link #lock}. */
    private abstract class Side extends FilterOutputStream {
        Side(OutputStream to) {
            super(to);
        }

        abstract void pass(byte[] b, int off, int len) throws IOException;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (len > 0) {
                synchronized (lock) {
                    pass(b, off, len);
                }
            }
        }
    }

    @Override
    public void close() {
        System.err.flush();
        System.setErr(formerErr);
    }
}
