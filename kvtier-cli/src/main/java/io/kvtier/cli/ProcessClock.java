package io.kvtier.cli;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;

/**
 * Seconds since the user started kvtier: what a user waits for, JVM start-up included. The start
 * is the launcher's start when {@code ./kvtier} passes it ({@code -Dkvtier.launchEpochSeconds}:
 * its own work and a build count too), else the operating system's record of this process's
 * start (to 10 ms), else the JVM's start time.
 */
final class ProcessClock {

    private static final long NANOS_AT_LOAD = System.nanoTime();
    private static final double SECONDS_AT_LOAD = secondsSinceStart();

    private ProcessClock() {
    }

    private static double secondsSinceStart() {
        Instant start = launcherStart();
        if (start == null) {
            start = ProcessHandle.current().info().startInstant()
                    .orElseGet(() -> Instant.ofEpochMilli(ManagementFactory.getRuntimeMXBean().getStartTime()));
        }
        return Math.max(0, Duration.between(start, Instant.now()).toNanos() / 1e9);
    }

    /** The launcher's start (bash's EPOCHREALTIME: seconds, a locale's decimal separator), or null. */
    private static Instant launcherStart() {
        String s = System.getProperty("kvtier.launchEpochSeconds", "");
        try {
            double seconds = Double.parseDouble(s.replace(',', '.'));
            return Instant.ofEpochSecond((long) seconds, (long) ((seconds - Math.floor(seconds)) * 1e9));
        } catch (NumberFormatException e) {
            return null;
        }
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
