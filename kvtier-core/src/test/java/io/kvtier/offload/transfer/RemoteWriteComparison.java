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
 * {@link RemoteCopier#SET_BATCH_BYTES} (side A; {@code -Dbatch=BYTES} for another size) against one by one (side B), rounds alternating
 * A B, B A in one JVM after a warm-up round; per side the median MB/s of payload and the CPU per value of the
 * server ({@code -Dredis.pid=PID}, 10 ms ticks), the store's I/O threads and the job's thread. {@code -Dpayload=BYTES}
 * (default 262144), {@code -Djobs=N} jobs a round (default 64). Run after
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
    private static final long BATCH = Long.getLong("batch", RemoteCopier.SET_BATCH_BYTES);
    private static final BlockKey NS = new BlockKey(6, 6, 6, 6);

    private RemoteWriteComparison() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        String tenant = "wcmp" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        try (HostSlab slab = new HostSlab(CHUNKS, PAYLOAD, TOKENS);
             LettuceRemoteStore store = LettuceRemoteStore.open(RemoteSettings.of(List.of(url), false, tenant, null)
                     .withTimeout(Duration.ofSeconds(10)), System.err::println)) {
            RemoteKeys keys = new RemoteKeys(tenant, NS);
            RemoteCopier[] sides = {new RemoteCopier(slab, store, keys, PAYLOAD).setBatchBytes(BATCH),
                    new RemoteCopier(slab, store, keys, PAYLOAD).setBatchBytes(0)};
            List<ChunkCopy> writes = new ArrayList<>();
            byte[] bytes = new byte[(int) PAYLOAD];
            new Random(1).nextBytes(bytes);
            for (int i = 0; i < CHUNKS; i++) {
                BlockKey key = new BlockKey(i + 1, 0, 7, 7);
                int[] t = new int[TOKENS];
                Arrays.fill(t, i);
                MemorySegment p = slab.payloadOf(i, PAYLOAD);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, p, 0, PAYLOAD);
                ChunkHeader.of(NS, key, NS, t, PAYLOAD, ChunkHeader.crc32c(p)).writeTo(slab.headerOf(i), 0);
                writes.add(new ChunkCopy(new int[] {-1}, i, NS, key, NS, t));
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
                    long job0 = threads.getCurrentThreadCpuTime();
                    long t0 = System.nanoTime();
                    for (int j = 0; j < JOBS; j++) {
                        TransferResult w = sides[side].runForBench(new RemoteJob(j, RemoteJob.Kind.WRITE, writes,
                                System.nanoTime() + 60_000_000_000L));
                        if (!w.success()) {
                            throw new IllegalStateException("write: " + w.error());
                        }
                    }
                    long dt = System.nanoTime() - t0;
                    if (r > 0) { // the first round warms both up
                        mbs[side][r - 1] = (double) JOBS * CHUNKS * PAYLOAD / 1e6 / (dt / 1e9);
                        serverUs[side][r - 1] = (RemoteReadComparison.serverCpu() - s0) / 1e3 / (JOBS * CHUNKS);
                        ioUs[side][r - 1] = (RemoteReadComparison.ioCpu(threads, false) - io0) / 1e3 / (JOBS * CHUNKS);
                        jobUs[side][r - 1] = (threads.getCurrentThreadCpuTime() - job0) / 1e3 / (JOBS * CHUNKS);
                    }
                }
            }
            for (int i = 0; i < CHUNKS; i++) {
                store.delete(keys.of(writes.get(i).key()));
            }
            System.out.printf("write jobs of %d values of %d KiB, %d a round, %d rounds, load average %.1f; medians:%n", CHUNKS,
                    PAYLOAD >> 10, JOBS, rounds, java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratio[r] = mbs[0][r] / mbs[1][r];
            }
            for (int side = 0; side < 2; side++) {
                System.out.printf("%-22s %.0f MB/s; CPU a value, us: server %.1f, I/O threads %.1f, job thread %.1f%n",
                        side == 0 ? "A (batches of " + (BATCH >> 10) + " KiB)" : "B (one by one)", RemoteReadComparison.median(mbs[side]),
                        RemoteReadComparison.median(serverUs[side]), RemoteReadComparison.median(ioUs[side]),
                        RemoteReadComparison.median(jobUs[side]));
            }
            System.out.printf("MB/s A/B per round: median %.2f, range %.2f-%.2f%n", RemoteReadComparison.median(ratio),
                    Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0));
        }
    }
}
