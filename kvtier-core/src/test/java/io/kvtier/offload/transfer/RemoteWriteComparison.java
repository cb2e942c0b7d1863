package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Benchmark (not a test): write jobs of 8 chunks (the shape of {@code bench offload}'s remote
 * store figure) through the remote copier into a real Redis, SETs sent in batches of
 * {@link SetBatch#BYTES} (side A; {@code -Dbatch=BYTES} for another size) against one by one (side B), rounds alternating
 * A B, B A in one JVM after a warm-up round; per side the median MB/s of payload and the CPU per value of the
 * server ({@code -Dredis.pid=PID}, 10 ms ticks), the store's I/O threads and the job's thread. {@code -Dpayload=BYTES}
 * (default 262144), {@code -Djobs=N} jobs a round (default 64). {@code -Dsides=workers}: instead, the jobs
 * through a transfer engine with {@value #IN_FLIGHT} submitted at once (each on slots of its own), two remote
 * write workers (A, the default: one job's SETs sent while the one before awaits its answers) against one (B). Run after
 * {@code mvn -pl kvtier-core test-compile}, with Redis up ({@code eval "$(.ci/redis-up DIR)"}):
 * <pre>
 * java -Dredis.pid=$(cat DIR/standalone.pid) -cp kvtier-core/target/classes:kvtier-core/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.offload.transfer.RemoteWriteComparison $KVTIER_REDIS_URL [ROUNDS]
 * </pre>
 */
public final class RemoteWriteComparison {

    private static final int CHUNKS = 8;
    private static final int TOKENS = 16;
    private static final long PAYLOAD = Long.getLong("payload", 262_144);
    private static final int JOBS = Integer.getInteger("jobs", 64);
    private static final long BATCH = Long.getLong("batch", SetBatch.BYTES);
    private static final BlockKey NS = new BlockKey(6, 6, 6, 6);
    private static final boolean WORKERS = "workers".equals(System.getProperty("sides"));
    /** Write jobs submitted at once in the {@code workers} comparison. */
    private static final int IN_FLIGHT = 3;

    /** A side of the comparison: runs a round's jobs. */
    private interface Side {
        void run(List<List<ChunkCopy>> writes);
    }

    /** CPU nanoseconds of the threads running the jobs so far: this one, the engines' remote writers, the SET repliers'. */
    private static long jobCpu(java.lang.management.ThreadMXBean threads) {
        long sum = threads.getCurrentThreadCpuTime();
        for (var t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && (t.getThreadName().startsWith("kvtier-transfer-remote-write") || t.getThreadName().startsWith("kvtier-remote-set"))) {
                sum += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    private static void check(TransferResult w) {
        if (w == null || !w.success()) {
            throw new IllegalStateException("write: " + (w == null ? "no result" : w.error()));
        }
    }

    /** A side running the jobs through the copier alone, one after another. */
    private static Side direct(RemoteCopier copier) {
        return writes -> {
            for (int j = 0; j < JOBS; j++) {
                check(copier.runForBench(new RemoteJob(j, RemoteJob.Kind.WRITE, writes.getFirst(), System.nanoTime() + 60_000_000_000L)));
            }
        };
    }

    /** A side submitting the jobs to {@code engine}, {@value #IN_FLIGHT} at once, each on its set of slots. */
    private static Side engine(AsyncTransferEngine engine) {
        long[] next = {1};
        return writes -> {
            java.util.ArrayDeque<Long> inFlight = new java.util.ArrayDeque<>();
            for (int j = 0; j < JOBS; j++) {
                if (inFlight.size() == IN_FLIGHT) {
                    check(engine.await(List.of(inFlight.poll()), Duration.ofSeconds(60)).stream().findFirst().orElse(null));
                }
                long id = next[0]++;
                engine.submit(new RemoteJob(id, RemoteJob.Kind.WRITE, writes.get(j % IN_FLIGHT), engine.nanoTime() + 60_000_000_000L));
                inFlight.add(id);
            }
            while (!inFlight.isEmpty()) {
                check(engine.await(List.of(inFlight.poll()), Duration.ofSeconds(60)).stream().findFirst().orElse(null));
            }
        };
    }

    private RemoteWriteComparison() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        String tenant = "wcmp" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        try (HostSlab slab = new HostSlab(IN_FLIGHT * CHUNKS, PAYLOAD, TOKENS);
             java.lang.foreign.Arena device = java.lang.foreign.Arena.ofShared();
             LettuceRemoteStore store = LettuceRemoteStore.open(RemoteSettings.of(List.of(url), false, tenant, null)
                     .withTimeout(Duration.ofSeconds(10)), System.err::println)) {
            RemoteKeys keys = new RemoteKeys(tenant, NS);
            ChunkCopier toDevice = new ChunkCopier(device.allocate(PAYLOAD), PAYLOAD, slab);
            List<AsyncTransferEngine> engines = new ArrayList<>();
            Side[] sides;
            if (WORKERS) {
                for (int workers : new int[] {2, 1}) {
                    engines.add(new AsyncTransferEngine(toDevice, new RemoteCopier(slab, store, keys, PAYLOAD), workers));
                }
                sides = new Side[] {engine(engines.get(0)), engine(engines.get(1))};
            } else {
                sides = new Side[] {direct(new RemoteCopier(slab, store, keys, PAYLOAD).setBatchBytes(BATCH)),
                        direct(new RemoteCopier(slab, store, keys, PAYLOAD).setBatchBytes(0))};
            }
            List<List<ChunkCopy>> writes = new ArrayList<>();
            byte[] bytes = new byte[(int) PAYLOAD];
            new Random(1).nextBytes(bytes);
            for (int set = 0; set < IN_FLIGHT; set++) {
                List<ChunkCopy> job = new ArrayList<>();
                for (int i = 0; i < CHUNKS; i++) {
                    BlockKey key = new BlockKey(set * CHUNKS + i + 1, 0, 7, 7);
                    int[] t = new int[TOKENS];
                    Arrays.fill(t, i);
                    int slot = set * CHUNKS + i;
                    MemorySegment p = slab.payloadOf(slot, PAYLOAD);
                    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, p, 0, PAYLOAD);
                    ChunkHeader.of(NS, key, NS, t, PAYLOAD, ChunkHeader.crc32c(p)).writeTo(slab.headerOf(slot), 0);
                    job.add(new ChunkCopy(new int[] {-1}, slot, NS, key, NS, t));
                }
                writes.add(job);
            }
            double[][] mbs = new double[2][rounds];
            double[][] serverUs = new double[2][rounds];
            double[][] ioUs = new double[2][rounds];
            double[][] jobUs = new double[2][rounds];
            var threads = java.lang.management.ManagementFactory.getThreadMXBean();
            for (int r = 0; r < rounds + 1; r++) {
                for (int k = 0; k < 2; k++) {
                    int side = (r + k) % 2; // A B, then B A
                    long s0 = RemoteReadComparison.serverCpu();
                    long io0 = RemoteReadComparison.ioCpu(threads, false);
                    long job0 = jobCpu(threads);
                    long t0 = System.nanoTime();
                    sides[side].run(writes);
                    long dt = System.nanoTime() - t0;
                    if (r > 0) { // the first round warms both up
                        mbs[side][r - 1] = (double) JOBS * CHUNKS * PAYLOAD / 1e6 / (dt / 1e9);
                        serverUs[side][r - 1] = (RemoteReadComparison.serverCpu() - s0) / 1e3 / (JOBS * CHUNKS);
                        ioUs[side][r - 1] = (RemoteReadComparison.ioCpu(threads, false) - io0) / 1e3 / (JOBS * CHUNKS);
                        jobUs[side][r - 1] = (jobCpu(threads) - job0) / 1e3 / (JOBS * CHUNKS);
                    }
                }
            }
            engines.forEach(AsyncTransferEngine::close);
            for (List<ChunkCopy> job : writes) {
                job.forEach(c -> store.delete(keys.of(c.key())));
            }
            System.out.printf("write jobs of %d values of %d KiB, %d a round, %d rounds, load average %.1f; medians:%n", CHUNKS,
                    PAYLOAD >> 10, JOBS, rounds, java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratio[r] = mbs[0][r] / mbs[1][r];
            }
            for (int side = 0; side < 2; side++) {
                System.out.printf("%-22s %.0f MB/s; CPU a value, us: server %.1f, I/O threads %.1f, job threads %.1f%n",
                        WORKERS ? (side == 0 ? "A (2 write workers)" : "B (1 write worker)")
                                : side == 0 ? "A (batches of " + (BATCH >> 10) + " KiB)" : "B (one by one)", RemoteReadComparison.median(mbs[side]),
                        RemoteReadComparison.median(serverUs[side]), RemoteReadComparison.median(ioUs[side]),
                        RemoteReadComparison.median(jobUs[side]));
            }
            System.out.printf("MB/s A/B per round: median %.2f, range %.2f-%.2f%n", RemoteReadComparison.median(ratio),
                    Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0));
        }
    }
}
