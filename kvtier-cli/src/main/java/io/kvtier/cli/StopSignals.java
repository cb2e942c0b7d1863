package io.kvtier.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * SIGINT and SIGTERM as a request to stop, not an immediate exit. The JVM turns both signals
 * into its shutdown sequence (exit status 128 + the signal: 130, 143); the hook installed here
 * marks the stop as requested and holds the shutdown until the command has stopped cleanly
 * ({@link #close()}: results printed, summary written, tiers flushed and closed), at most
 * {@link #GRACE_SECONDS} seconds. Without the hook a signal would exit at once and lose every
 * finished result.
 */
final class StopSignals implements AutoCloseable {

    /** Longest wait for a clean stop after a signal before the JVM exits anyway. */
    static final int GRACE_SECONDS = 20;

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread hook;
    private volatile boolean requested;

    private StopSignals() {
        hook = new Thread(this::onShutdown, "kvtier-stop");
    }

    /** Installs the hook; {@link #close()} removes it (or, after a signal, lets the exit go on). */
    static StopSignals install() {
        StopSignals s = new StopSignals();
        Runtime.getRuntime().addShutdownHook(s.hook);
        return s;
    }

    /** Whether a signal asked to stop. */
    boolean requested() {
        return requested;
    }

    private void onShutdown() {
        requested = true;
        try {
            if (!stopped.await(GRACE_SECONDS, TimeUnit.SECONDS)) {
                System.err.println("kvtier: did not stop within " + GRACE_SECONDS + " s of the signal; exiting");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The command has stopped: lets a pending exit go on, or removes the hook after a normal run. */
    @Override
    public void close() {
        stopped.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // a signal arrived: the JVM is exiting with its status (130 or 143) once the hook returns
        }
    }
}
