package io.kvtier.cli;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;

/**
 * The process's standard output, keeping why its first write failed. A {@link PrintStream} only
 * says that a write failed ({@link PrintStream#checkError}); a reader gone ({@code | head}, EPIPE)
 * ends a run quietly as SIGPIPE would, but a full disk or {@code >/dev/full} loses the output and
 * must say so (it exited 141 with nothing on standard error, a new user's trial).
 */
final class StandardOutput extends FilterOutputStream {

    /** The JDK's message for EPIPE. */
    static final String BROKEN_PIPE = "Broken pipe";

    private static volatile String failure;

    /** Whether this stream's failures are the process's (standard output's own stream, not the warm-up's copy). */
    private final boolean records;

    StandardOutput(OutputStream to) {
        this(to, true);
    }

    private StandardOutput(OutputStream to, boolean records) {
        super(to);
        this.records = records;
    }

    /** Replaces {@code System.out} (the JVM's, at start-up) with one over this class, in its charset. */
    static void install() {
        System.setOut(over(new FileOutputStream(FileDescriptor.out), System.out.charset(), true));
    }

    /** Bytes of standard output's buffer. */
    private static final int BUFFER = 8192;

    /**
     * The print stream {@link #install} puts over standard output, over {@code sink} instead, its
     * failures not recorded: the warm-up builds its discarded output the same way, so that the
     * code a streamed token takes is the code it compiles.
     */
    static PrintStream printStreamOver(OutputStream sink, java.nio.charset.Charset charset) {
        return over(sink, charset, false);
    }

    private static PrintStream over(OutputStream sink, java.nio.charset.Charset charset, boolean records) {
        return new PrintStream(new BufferedOutputStream(new StandardOutput(sink, records), BUFFER), true, charset);
    }

    /** The message of the first failed write to standard output ({@code No space left on device}), or null. */
    static String failure() {
        return failure;
    }

    /** Forgets a failure (for tests). */
    static void reset() {
        failure = null;
    }

    /**
     * The exit status of a run whose standard output failed: 141 quietly for a reader gone (or a cause
     * unknown: the output went to a test's stream), else the cause in one line on {@code err} and 1.
     */
    static int statusOfFailedOutput(PrintStream err) {
        String why = failure;
        if (why == null || why.equals(BROKEN_PIPE)) {
            return 141; // as a process killed by SIGPIPE: quietly, the reader has gone
        }
        err.println("kvtier: cannot write standard output: " + why);
        return 1;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        try {
            out.write(b, off, len);
        } catch (IOException e) {
            keep(e);
            throw e;
        }
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void flush() throws IOException {
        try {
            out.flush();
        } catch (IOException e) {
            keep(e);
            throw e;
        }
    }

    private void keep(IOException e) {
        if (records && failure == null) {
            failure = e.getMessage() != null ? e.getMessage() : e.toString();
        }
    }
}
