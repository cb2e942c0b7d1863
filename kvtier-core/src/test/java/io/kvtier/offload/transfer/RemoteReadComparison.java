package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Benchmark (not a test): a remote hit's load of the 110M TTFT prefix (62 values of 1.18 MB, 16
 * tokens each) from a real Redis through host slots into device blocks (a {@link RemoteJob.Kind#LOAD}),
 * the way the engine runs it (side A) against a variant (side B), rounds alternating A B, B A in
 * one JVM after a warm-up round. Per side, medians of: the job's wall time, the process's CPU
 * time, the CPU time of the store's I/O threads (and of it, in user mode) and of the job's own thread, and the server's CPU
 * time (from {@code /proc/PID/stat} with {@code -Dredis.pid=PID}: 10 ms ticks). Variants:
 * {@code taker} (values checked and copied to the device on the job's thread,
 * {@link RemoteCopier#CHECK_ON_TAKER}); {@code first} (B sends {@link RemoteCopier#FIRST_BYTES} of GETs at
 * once, A only {@link ReadWindow#FIRST_GETS}); {@code same} (an A/A control). {@code -Dchunks=N} and
 * {@code -Dpayload=BYTES} change the load's shape. Run after
 * {@code mvn -pl kvtier-core test-compile}, with Redis up ({@code eval "$(.ci/redis-up DIR)"}):
 * <pre>
 * java -Dredis.pid=$(cat DIR/standalone.pid) -cp kvtier-core/target/classes:kvtier-core/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.offload.transfer.RemoteReadComparison $KVTIER_REDIS_URL taker [ROUNDS]
 * </pre>
 */
public final class RemoteReadComparison {

    private static final int CHUNKS = Integer.getInteger("chunks", 62);
    private static final int TOKENS = 16;
    /** Default: 16 tokens x 12 layers x 2 x 768 x 4 bytes; {@code -Dpayload=262144} for bench offload's 256 KiB. */
    private static final long PAYLOAD = Long.getLong("payload", 1_179_648);
    private static final BlockKey NS = new BlockKey(5, 5, 5, 5);

    private RemoteReadComparison() {
    }

    private static BlockKey key(long i) {
        return new BlockKey(i + 1, i * 31, i * 17, 77);
    }

    private static int[] tokens(long i) {
        int[] t = new int[TOKENS];
        Arrays.fill(t, (int) i);
        return t;
    }

    private static ChunkCopy copy(int slot, long i, int deviceBlock) {
        return new ChunkCopy(new int[] {deviceBlock}, slot, NS, key(i), i == 0 ? NS : key(i - 1), tokens(i));
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String variant = args.length > 1 ? args[1] : "taker";
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        boolean taker = variant.contains("taker");
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String tenant = "cmp" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        try (HostSlab slab = new HostSlab(2 * CHUNKS, PAYLOAD, TOKENS);
             Arena arena = Arena.ofShared();
             LettuceRemoteStore store = LettuceRemoteStore.open(RemoteSettings.of(List.of(url), false, tenant, null)
                     .withTimeout(Duration.ofSeconds(10)), System.err::println)) {
            RemoteKeys keys = new RemoteKeys(tenant, NS);
            ChunkCopier device = new ChunkCopier(arena.allocate(CHUNKS * PAYLOAD, 64), PAYLOAD, slab);
            RemoteCopier a = new RemoteCopier(slab, store, keys, PAYLOAD, RemoteCopier.READ_WINDOW_BYTES, ReadWindow.FIRST_GETS, false);
            RemoteCopier b = new RemoteCopier(slab, store, keys, PAYLOAD, RemoteCopier.READ_WINDOW_BYTES,
                    ReadWindow.FIRST_GETS, variant.contains("first") ? RemoteCopier.FIRST_BYTES : 0, taker);
            List<ChunkCopy> writes = new ArrayList<>();
            List<ChunkCopy> loads = new ArrayList<>();
            Random rnd = new Random(1);
            byte[] bytes = new byte[(int) PAYLOAD];
            for (int i = 0; i < CHUNKS; i++) {
                MemorySegment payload = slab.payloadOf(i, PAYLOAD);
                rnd.nextBytes(bytes);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, payload, 0, PAYLOAD);
                ChunkHeader.of(NS, key(i), i == 0 ? NS : key(i - 1), tokens(i), PAYLOAD, ChunkHeader.crc32c(payload))
                        .writeTo(slab.headerOf(i), 0);
                writes.add(copy(i, i, -1));
                loads.add(copy(CHUNKS + i, i, i));
            }
            long job = 1;
            for (int from = 0; from < CHUNKS; from += 4) { // a few values a job: each SET's timeout covers only them
                TransferResult w = a.runForBench(new RemoteJob(job++, RemoteJob.Kind.WRITE,
                        writes.subList(from, Math.min(CHUNKS, from + 4)), System.nanoTime() + 60_000_000_000L));
                if (!w.success()) {
                    throw new IllegalStateException("write: " + w.error());
                }
            }
            String[] what = {"wall", "process CPU", "I/O threads CPU", "of it user", "job thread CPU", "server CPU"};
            double[][][] m = new double[2][what.length][rounds];
            var threads = ManagementFactory.getThreadMXBean();
            for (int r = 0; r < rounds + 1; r++) {
                for (int k = 0; k < 2; k++) {
                    int side = (r + k) % 2; // A B, then B A
                    long[] before = {0, os.getProcessCpuTime(), ioCpu(threads, false), ioCpu(threads, true), threads.getCurrentThreadCpuTime(),
                            serverCpu()};
                    long t0 = System.nanoTime();
                    TransferResult res = (side == 0 ? a : b).run(new RemoteJob(job++, RemoteJob.Kind.LOAD, loads,
                            System.nanoTime() + 60_000_000_000L), RemoteCopier.FREE, device);
                    long[] after = {System.nanoTime() - t0, os.getProcessCpuTime(), ioCpu(threads, false),
                            ioCpu(threads, true), threads.getCurrentThreadCpuTime(), serverCpu()};
                    if (!res.success()) {
                        throw new IllegalStateException("load: " + res.error());
                    }
                    if (r > 0) { // the first round warms both up
                        for (int q = 0; q < what.length; q++) {
                            m[side][q][r - 1] = (after[q] - before[q]) / 1e6;
                        }
                    }
                }
            }
            System.out.printf("load of %d values of %.2f MB, %d rounds, variant %s, load average %.1f; medians, ms:%n", CHUNKS,
                    (ChunkHeader.encodedSize(TOKENS) + PAYLOAD) / 1e6, rounds, variant, os.getSystemLoadAverage());
            for (int s = 0; s < 2; s++) {
                StringBuilder line = new StringBuilder(s == 0 ? "A (2 first GETs)" : "B (" + variant + ")");
                for (int q = 0; q < what.length; q++) {
                    line.append(String.format("  %s %.1f", what[q], median(m[s][q])));
                }
                System.out.println(line);
            }
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratio[r] = m[1][0][r] / m[0][0][r];
            }
            System.out.printf("wall B/A per round: median %.2f, range %.2f-%.2f%n", median(ratio),
                    Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0));
        }
    }

    /** CPU nanoseconds of the store client's I/O threads so far ({@code user}: in user mode only). */
    static long ioCpu(java.lang.management.ThreadMXBean threads, boolean user) {
        long sum = 0;
        for (var t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("lettuce-nioEventLoop")) {
                sum += Math.max(0, user ? threads.getThreadUserTime(t.getThreadId()) : threads.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    /** The server's CPU nanoseconds so far (utime + stime of -Dredis.pid, 10 ms ticks); 0 without it. */
    static long serverCpu() throws java.io.IOException {
        String pid = System.getProperty("redis.pid");
        if (pid == null) {
            return 0;
        }
        String stat = Files.readString(Path.of("/proc", pid, "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
