package io.kvtier.bench;

import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.offload.transfer.LoadJob;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.AsyncTransferEngine;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Measures the host data path: store (device -> slot, with CRC32C and header) and load (verify
 * header and CRC32C, then slot -> device) through {@link ChunkCopier}, against a plain
 * {@link MemorySegment#copy} of the same bytes, in the same run, on one thread; and the same
 * store and load through an {@link AsyncTransferEngine} (jobs of {@value #CHUNKS_PER_JOB}
 * chunks, submitted at once and awaited), which adds the hand-off to its threads. Each pass moves
 * a working set larger than the caches (default 128 MiB per side) chunk by chunk; the kinds of
 * pass alternate so that machine noise affects them alike, and the median pass of each kind is
 * reported. GB/s are 10^9 bytes per second.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -cp kvtier-core/target/classes:kvtier-bench/target/classes
 * io.kvtier.bench.CopyBandwidth [workingSetMiB] [seconds per size]}.
 */
public final class CopyBandwidth {

    /** Chunks per job in the engine passes. */
    public static final int CHUNKS_PER_JOB = 8;

    /** Chunk sizes measured by default: 16 KiB to 4 MiB. */
    public static final List<Long> DEFAULT_CHUNK_BYTES = List.of(16L << 10, 64L << 10, 256L << 10, 1L << 20, 4L << 20);

    /**
     * One chunk size.
     *
     * @param chunkBytes payload bytes per chunk
     * @param copyGBps   plain MemorySegment.copy, device -> host
     * @param storeGBps  ChunkCopier.store (copy + CRC32C + header)
     * @param loadGBps   ChunkCopier.load (verify header + CRC32C, then copy)
     * @param engineStoreGBps store jobs through an AsyncTransferEngine
     * @param engineLoadGBps  load jobs through an AsyncTransferEngine
     */
    public record Point(long chunkBytes, double copyGBps, double storeGBps, double loadGBps, double engineStoreGBps,
                        double engineLoadGBps) {

        /** Store bandwidth as a fraction of the plain copy. */
        public double storeRatio() {
            return storeGBps / copyGBps;
        }

        /** Load bandwidth as a fraction of the plain copy. */
        public double loadRatio() {
            return loadGBps / copyGBps;
        }
    }

    private CopyBandwidth() {
    }

    /** Measures every size of {@link #DEFAULT_CHUNK_BYTES} with 128 MiB working sets, ~1 s each. */
    public static List<Point> measure() {
        return measure(DEFAULT_CHUNK_BYTES, 128L << 20, Duration.ofSeconds(1));
    }

    /** Measures each chunk size; see {@link #measure(long, long, Duration)}. */
    public static List<Point> measure(List<Long> chunkSizes, long workingSetBytes, Duration perSize) {
        List<Point> out = new ArrayList<>();
        for (long size : chunkSizes) {
            out.add(measure(size, workingSetBytes, perSize));
        }
        return out;
    }

    /**
     * Measures one chunk size.
     *
     * @param chunkBytes      payload bytes per chunk (one device block per chunk)
     * @param workingSetBytes bytes moved per pass (rounded down to whole chunks, at least one)
     * @param perSize         time to spend, split between the three kinds of pass (at least 5 each)
     */
    public static Point measure(long chunkBytes, long workingSetBytes, Duration perSize) {
        int chunks = (int) Math.max(1, workingSetBytes / chunkBytes);
        int tokensPerChunk = 16;
        try (Arena arena = Arena.ofShared();
             HostSlab slab = new HostSlab(chunks, chunkBytes, tokensPerChunk)) {
            MemorySegment device = arena.allocate(chunks * chunkBytes, 4096);
            for (long i = 0; i < device.byteSize(); i += 8) {
                device.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            ChunkCopier copier = new ChunkCopier(device, chunkBytes, slab);
            List<ChunkCopy> copies = new ArrayList<>(chunks);
            BlockKey ns = new BlockKey(1, 2, 3, 4);
            for (int i = 0; i < chunks; i++) {
                int[] tokens = new int[tokensPerChunk];
                Arrays.fill(tokens, i);
                copies.add(new ChunkCopy(new int[] {i}, i, ns, new BlockKey(0, 0, 0, i + 1), new BlockKey(0, 0, 0, i), tokens));
            }
            long passBytes = chunks * chunkBytes;
            List<Double> copy = new ArrayList<>();
            List<Double> store = new ArrayList<>();
            List<Double> load = new ArrayList<>();
            List<Double> engineStore = new ArrayList<>();
            List<Double> engineLoad = new ArrayList<>();
            try (AsyncTransferEngine engine = new AsyncTransferEngine(copier)) {
                long[] nextId = {1};
                storePass(copier, copies); // warm-up: JIT, page faults, and headers for the loads
                loadPass(copier, copies);
                copyPass(device, slab, chunkBytes, chunks);
                enginePass(engine, copies, true, nextId);
                enginePass(engine, copies, false, nextId);
                long end = System.nanoTime() + perSize.toNanos();
                while (copy.size() < 5 || System.nanoTime() < end) {
                    copy.add(gbps(passBytes, copyPass(device, slab, chunkBytes, chunks)));
                    store.add(gbps(passBytes, storePass(copier, copies)));
                    load.add(gbps(passBytes, loadPass(copier, copies)));
                    engineStore.add(gbps(passBytes, enginePass(engine, copies, true, nextId)));
                    engineLoad.add(gbps(passBytes, enginePass(engine, copies, false, nextId)));
                }
            }
            return new Point(chunkBytes, Samples.median(copy), Samples.median(store), Samples.median(load),
                    Samples.median(engineStore), Samples.median(engineLoad));
        }
    }

    private static long enginePass(AsyncTransferEngine engine, List<ChunkCopy> copies, boolean store, long[] nextId) {
        long t0 = System.nanoTime();
        long deadline = engine.nanoTime() + Duration.ofMinutes(5).toNanos();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < copies.size(); i += CHUNKS_PER_JOB) {
            List<ChunkCopy> part = copies.subList(i, Math.min(copies.size(), i + CHUNKS_PER_JOB));
            long id = nextId[0]++;
            engine.submit(store ? new StoreJob(id, part, deadline) : new LoadJob(id, part, deadline));
            ids.add(id);
        }
        List<TransferResult> results = engine.await(ids, Duration.ofMinutes(5));
        long nanos = System.nanoTime() - t0;
        if (results.size() != ids.size() || !results.stream().allMatch(TransferResult::success)) {
            throw new IllegalStateException("bandwidth run: " + (ids.size() - results.size()) + " jobs unfinished, "
                    + results.stream().filter(r -> !r.success()).findFirst().map(TransferResult::error).orElse("none failed"));
        }
        return nanos;
    }

    private static long copyPass(MemorySegment device, HostSlab slab, long chunkBytes, int chunks) {
        long t0 = System.nanoTime();
        for (int i = 0; i < chunks; i++) {
            MemorySegment.copy(device, i * chunkBytes, slab.payloadOf(i), 0, chunkBytes);
        }
        return System.nanoTime() - t0;
    }

    private static long storePass(ChunkCopier copier, List<ChunkCopy> copies) {
        long t0 = System.nanoTime();
        for (ChunkCopy c : copies) {
            copier.store(c);
        }
        return System.nanoTime() - t0;
    }

    private static long loadPass(ChunkCopier copier, List<ChunkCopy> copies) {
        long t0 = System.nanoTime();
        for (ChunkCopy c : copies) {
            if (!copier.load(c).ok()) {
                throw new IllegalStateException("bandwidth run: chunk " + c.key().shortHex() + " failed verification");
            }
        }
        return System.nanoTime() - t0;
    }

    private static double gbps(long bytes, long nanos) {
        return bytes / (double) Math.max(1, nanos);
    }

    /** Formats points as a table (chunk size, GB/s of copy, store, load, the ratios, GB/s through the engine). */
    public static String table(List<Point> points) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%8s %10s %10s %10s %8s %8s %12s %12s%n",
                "chunk", "copy GB/s", "store GB/s", "load GB/s", "store %", "load %", "engine store", "engine load"));
        for (Point p : points) {
            sb.append(String.format(Locale.ROOT, "%8s %10s %10s %10s %7.0f%% %7.0f%% %12s %12s%n",
                    size(p.chunkBytes()), Gbps.of(p.copyGBps()), Gbps.of(p.storeGBps()), Gbps.of(p.loadGBps()), 100 * p.storeRatio(),
                    100 * p.loadRatio(), Gbps.of(p.engineStoreGBps()), Gbps.of(p.engineLoadGBps())));
        }
        return sb.toString();
    }

    private static String size(long bytes) {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }

    /** Prints the table for the default sizes; args: [workingSetMiB (128)] [seconds per size (1)]. */
    public static void main(String[] args) {
        long ws = args.length > 0 ? Long.parseLong(args[0]) << 20 : 128L << 20;
        Duration per = Duration.ofMillis((long) (1000 * (args.length > 1 ? Double.parseDouble(args[1]) : 1)));
        System.out.print(table(measure(DEFAULT_CHUNK_BYTES, ws, per)));
        System.out.println("CRC32C of 1 MiB in place: " + Gbps.of(crcGBps(1 << 20)) + " GB/s");
    }

    /** CRC32C speed over an in-cache buffer, for reference. */
    static double crcGBps(long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(bytes, 64);
            s.fill((byte) 3);
            for (int i = 0; i < 200; i++) {
                ChunkHeader.crc32c(s);
            }
            int reps = 2000;
            long t0 = System.nanoTime();
            for (int i = 0; i < reps; i++) {
                ChunkHeader.crc32c(s);
            }
            return gbps(bytes * reps, System.nanoTime() - t0);
        }
    }
}
