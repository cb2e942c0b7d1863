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

    StandardOutput(OutputStream to) {
        super(to);
    }

    /** Replaces {@code System.out} (the JVM's, at start-up) with one over this class, in its charset. */
    static void install() {
        System.setOut(new PrintStream(new BufferedOutputStream(new StandardOutput(new FileOutputStream(FileDescriptor.out)), 8192),
                true, System.out.charset()));
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

    private static void keep(IOException e) {
        if (failure == null) {
            failure = e.getMessage() != null ? e.getMessage() : e.toString();
        }
    }
}
