package io.kvtier.cli;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;

/**
 * Keeps {@code generate}'s standard error lines off its streamed text. The text streams on
 * standard output token by token, so it is mid-line most of the time; a line on standard error
 * then (the remote tier's "stopped answering", a disk warning, a log record) would be glued to
 * it on a terminal showing both ({@code ...with the other dogskvtier: remote tier: ...}, a new
 * user's trial). Standard output here remembers whether its last byte ended a line, and
 * standard error, before writing, ends that line first. Standard error is replaced for the run,
 * not handed to each sink: the sinks print to {@code System.err} when they are called, from any
 * thread. When the two streams go to different places the break is one blank-looking line
 * on standard error, and the text on standard output is unchanged.
 */
final class TerminalLines implements AutoCloseable {

    private final Object lock = new Object();
    private final OutputStream out;
    private final PrintStream formerErr;
    /** Whether standard output's last byte was not a line end (written under {@link #lock}). */
    private boolean outMidLine;

    private TerminalLines(OutputStream out, PrintStream err) {
        this.out = out;
        this.formerErr = err;
    }

    /** Tracks {@code System.out} and routes {@code System.err} through the line check until {@link #close}. */
    static TerminalLines install() {
        TerminalLines lines = new TerminalLines(System.out, System.err);
        System.setErr(new PrintStream(lines.new Err(lines.formerErr), true, lines.formerErr.charset()));
        return lines;
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
            if (outMidLine) {
                // The break goes to standard error: a text redirected to a file stays as generated.
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
