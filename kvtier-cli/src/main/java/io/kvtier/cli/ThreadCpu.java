package io.kvtier.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Diagnostics of the warm start ({@code -Dkvtier.warmup.debug=true}): CPU time per thread group of
 * this process from Linux's {@code /proc/self/task/<tid>/stat}, so that a run on a loaded machine
 * can say how much compiling was done before and during the measured window. Linux only; elsewhere
 * (or on any read error) the map is empty.
 */
final class ThreadCpu {

    private ThreadCpu() {
    }

    /** Seconds of CPU (user + system) per thread name without its trailing number ("C2 CompilerThre", "kvtier-compute-"). */
    static Map<String, Double> byGroup() {
        Map<String, Double> out = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"));
                } catch (IOException e) {
                    continue; // the thread ended
                }
                int open = stat.indexOf('('), close = stat.lastIndexOf(')');
                String name = stat.substring(open + 1, close).replaceAll("#?[0-9]+$", "");
                String[] f = stat.substring(close + 2).split(" ");
                double secs = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // utime, stime in clock ticks
                out.merge(name, secs, Double::sum);
            }
        } catch (IOException | RuntimeException e) {
            return Map.of();
        }
        return out;
    }

    /**
     * One line: the JVM's uptime and the CPU seconds per group, for stderr, with the clock's step:
     * /proc counts in the kernel's 10 ms ticks, so "0.01" is one tick, not a measured 10.00 ms.
     */
    static String line(String label) {
        StringBuilder b = new StringBuilder("kvtier: cpu " + label + " at uptime "
                + ManagementFactory.getRuntimeMXBean().getUptime() + " ms (seconds, in 10 ms ticks):");
        byGroup().forEach((k, v) -> { if (v > 0) b.append(String.format(" [%s] %.2f", k, v)); });
        return b.toString();
    }
}
