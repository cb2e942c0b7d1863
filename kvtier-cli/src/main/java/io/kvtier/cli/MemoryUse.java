package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.offload.GroupStats;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.tier.HostSlab;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The memory each part of a run holds, in bytes, for the summary: the model file (weights,
 * read or mapped whole), the device KV pool and the host tier (reserved, and resident: the pages
 * written at least once, counted by {@code mincore}), the Java heap and the JVM's own memory
 * (code cache, classes), and the process's resident size now and at its peak (from
 * {@code /proc/self/status}, 0 where there is none).
 *
 * @param modelFile      bytes of the model file
 * @param deviceReserved bytes of the device pool's slab
 * @param deviceResident of which resident
 * @param hostReserved   bytes of the host tier's slab (0 without one)
 * @param hostResident   of which resident
 * @param heapUsed       Java heap in use
 * @param heapCommitted  Java heap committed
 * @param jvmNonHeap     committed non-heap memory of the JVM (code cache, metaspace)
 * @param resident       the process's resident set (VmRSS)
 * @param peakResident   its peak so far (VmHWM)
 */
record MemoryUse(long modelFile, long deviceReserved, long deviceResident, long hostReserved, long hostResident,
                 long heapUsed, long heapCommitted, long jvmNonHeap, long resident, long peakResident) {

    /** Measures now. */
    static MemoryUse of(Engine engine, Path modelFile) {
        long hostReserved = 0;
        long hostResident = 0;
        // Every KV group's host tier (one for a one-group model).
        for (OffloadScheduler g : engine.offload() == null ? java.util.List.<OffloadScheduler>of()
                : GroupStats.schedulers(engine.offload())) {
            HostSlab slab = g.host().hasSlab() ? g.host().slab() : null;
            hostReserved += slab == null ? 0 : slab.byteSize();
            hostResident += slab == null ? 0 : slab.residentBytes();
        }
        Runtime rt = Runtime.getRuntime();
        long[] status = procStatus();
        return new MemoryUse(size(modelFile), engine.devicePoolBytes(), engine.devicePoolResidentBytes(),
                hostReserved, hostResident,
                rt.totalMemory() - rt.freeMemory(), rt.totalMemory(),
                ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage().getCommitted(), status[0], status[1]);
    }

    /** As JSON fields, in bytes. */
    Map<String, Object> json() {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("model_file_bytes", modelFile);
        o.put("device_pool_reserved_bytes", deviceReserved);
        o.put("device_pool_resident_bytes", deviceResident);
        o.put("host_tier_reserved_bytes", hostReserved);
        o.put("host_tier_resident_bytes", hostResident);
        o.put("heap_used_bytes", heapUsed);
        o.put("heap_committed_bytes", heapCommitted);
        o.put("jvm_non_heap_bytes", jvmNonHeap);
        o.put("resident_bytes", resident);
        o.put("peak_resident_bytes", peakResident);
        return o;
    }

    /**
     * One summary line, in MiB (2^20 bytes): the unit the size flags read ({@code --host-cache-bytes
     * 256M} is 256 MiB, {@link Sizes}), so a tier asked for as 256M reads back as 256.0 MiB (a new
     * user's trial saw it printed as 268.4 MB).
     */
    String line() {
        return String.format(Locale.ROOT, "memory: resident %s (peak %s): model %s, device KV pool %s written of %s reserved, "
                        + "%sJava heap %s used of %s, JVM code and classes %s",
                mib(resident), mib(peakResident), mib(modelFile), mib(deviceResident), mib(deviceReserved),
                hostReserved == 0 ? "" : "host tier " + mib(hostResident) + " written of " + mib(hostReserved) + " reserved, ",
                mib(heapUsed), mib(heapCommitted), mib(jvmNonHeap));
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20));
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return 0;
        }
    }

    /** VmRSS and VmHWM in bytes; zeros where /proc/self/status is missing. */
    private static long[] procStatus() {
        long[] v = new long[2];
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    v[0] = kib(line);
                } else if (line.startsWith("VmHWM:")) {
                    v[1] = kib(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: the figures stay 0
        }
        return v;
    }

    private static long kib(String line) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
    }
}
