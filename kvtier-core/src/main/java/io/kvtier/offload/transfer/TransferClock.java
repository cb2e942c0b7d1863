package io.kvtier.offload.transfer;

import java.time.Duration;

/**
 * Time for deadlines, in nanoseconds: the system's monotonic clock, or a {@link Manual} one that
 * tests advance by hand (waiting on it advances it, so nothing ever sleeps).
 */
public sealed interface TransferClock permits TransferClock.SystemClock, TransferClock.Manual {

    /** Current time, nanoseconds (only differences are meaningful). */
    long nanoTime();

    /** Returns once {@link #nanoTime()} has reached {@code nanoTime}. */
    void sleepUntil(long nanoTime) throws InterruptedException;

    /** {@link System#nanoTime()}; sleeps for real. */
    static TransferClock system() {
        return SystemClock.INSTANCE;
    }

    /** The system clock. */
    final class SystemClock implements TransferClock {
        private static final SystemClock INSTANCE = new SystemClock();

        private SystemClock() {
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleepUntil(long nanoTime) throws InterruptedException {
            for (long left; (left = nanoTime - System.nanoTime()) > 0; ) {
                Thread.sleep(Duration.ofNanos(left));
            }
        }
    }

    /** A clock that moves only when told to; {@link #sleepUntil} jumps forward. Single-threaded use. */
    final class Manual implements TransferClock {
        private long now;

        /** A clock starting at {@code start} nanoseconds. */
        public Manual(long start) {
            this.now = start;
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void sleepUntil(long nanoTime) {
            now = Math.max(now, nanoTime);
        }

        /** Moves the clock forward. */
        public void advance(Duration d) {
            if (d.isNegative()) {
                throw new IllegalArgumentException("a clock cannot go back: " + d);
            }
            now += d.toNanos();
        }
    }
}
