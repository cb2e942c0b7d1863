package io.kvtier.tier.remote;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waits, with a generous deadline, for something a store changes in the background: a breaker's
 * state, the lines it said (a breaker's state changes a moment before its line is said). No timed
 * assertion: the caller asserts on the value returned, which names what did not happen in time.
 */
public final class Await {

    /** Long enough for a loaded machine; a wait that ends early costs nothing. */
    public static final Duration DEADLINE = Duration.ofSeconds(30);

    private Await() {
    }

    /** Reads {@code value} until {@code done} accepts it or {@link #DEADLINE} passes; the last value read. */
    public static <T> T untilMatch(Supplier<T> value, Predicate<T> done) throws InterruptedException {
        long end = System.nanoTime() + DEADLINE.toNanos();
        T v = value.get();
        while (!done.test(v) && System.nanoTime() < end) {
            Thread.sleep(10);
            v = value.get();
        }
        return v;
    }

    /** {@link #untilMatch} {@code value} equals {@code wanted}. */
    public static <T> T until(Supplier<T> value, T wanted) throws InterruptedException {
        return untilMatch(value, wanted::equals);
    }
}
