package io.kvtier.cli;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;

/**
 * Seconds since this process started: what a user waits for, JVM start-up included. When
 * {@code ./kvtier} runs the JVM it replaces itself with it ({@code exec}: same process), so this
 * also counts the launcher's own work. The start is the operating system's record of the
 * process (to 10 ms), else the JVM's start time.
 */
final class ProcessClock {

    private static final long NANOS_AT_LOAD = System.nanoTime();
    private static final double SECONDS_AT_LOAD = secondsSinceStart();

    private ProcessClock() {
    }

    private static double secondsSinceStart() {
        Instant start = ProcessHandle.current().info().startInstant()
                .orElseGet(() -> Instant.ofEpochMilli(ManagementFactory.getRuntimeMXBean().getStartTime()));
        return Math.max(0, Duration.between(start, Instant.now()).toNanos() / 1e9);
    }

    /** Seconds from the process's start to the moment {@code nanoTime} (a {@link System#nanoTime()} value). */
    static double at(long nanoTime) {
        return SECONDS_AT_LOAD + (nanoTime - NANOS_AT_LOAD) / 1e9;
    }

    /** Seconds from the process's start to now. */
    static double now() {
        return at(System.nanoTime());
    }
}
