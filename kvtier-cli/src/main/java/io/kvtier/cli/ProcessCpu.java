package io.kvtier.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;

/**
 * CPU time of this whole process (every thread, ended ones and the JVM's own included), at the
 * finest clock there is. The JDK's {@code OperatingSystemMXBean.getProcessCpuTime} counts in the
 * kernel's 10 ms ticks on Linux ({@code times(2)}), so a 40 ms figure came out as 30.00 or 40.00
 * ms (a new user's TTFT lines); {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)} counts in
 * nanoseconds. Linux only; elsewhere, or if the call cannot be linked, the JDK's figure, and
 * {@link #resolutionNanos} says how coarse it is.
 */
final class ProcessCpu {

    private static final int CLOCK_PROCESS_CPUTIME_ID = 2; // Linux
    /** {@code times(2)}'s tick at the usual USER_HZ of 100: the JDK's fallback figure's step. */
    private static final long TICK_NANOS = 10_000_000L;
    private static final MethodHandle CLOCK_GETTIME = link();

    private ProcessCpu() {
    }

    private static MethodHandle link() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle h = linker.downcallHandle(linker.defaultLookup().find("clock_gettime").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
            return read(h) >= 0 ? h : null;
        } catch (Throwable e) {
            return null; // no native access: the JDK's ticks
        }
    }

    /** The process's CPU time by {@code h} (clock_gettime), ns; -1 if the call failed. */
    private static long read(MethodHandle h) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ts = a.allocate(16, 8); // struct timespec { time_t tv_sec; long tv_nsec; } on 64-bit Linux
            int rc = (int) h.invokeExact(CLOCK_PROCESS_CPUTIME_ID, ts);
            return rc != 0 ? -1 : ts.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + ts.get(ValueLayout.JAVA_LONG, 8);
        }
    }

    /** CPU time of the process so far, ns (a difference of two readings is what means something). */
    static long nanos() {
        if (CLOCK_GETTIME != null) {
            long t;
            try {
                t = read(CLOCK_GETTIME);
            } catch (Throwable e) {
                throw new IllegalStateException("clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed after it had worked", e);
            }
            if (t < 0) { // never the JDK's ticks instead: a difference of the two clocks is nonsense
                throw new IllegalStateException("clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed after it had worked");
            }
            return t;
        }
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        return os.getProcessCpuTime();
    }

    /** The step of {@link #nanos}: 1 ns with clock_gettime, the kernel's 10 ms tick without. */
    static long resolutionNanos() {
        return CLOCK_GETTIME != null ? 1 : TICK_NANOS;
    }
}
