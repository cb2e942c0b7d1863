package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Benchmark (not a test): a remote hit's read of the 110M TTFT prefix (62 values of 1.18 MB, 16
 * tokens each) from a real Redis into host slots, with the read window opened one value per
 * answer ({@link ReadWindow#FIRST_GETS} GETs first) against the whole window sent at once (the
 * read before), rounds alternating A B B A in one JVM. Prints the median wall time of the job
 * and of its first value (with {@code -Dkvtier.remote.trace=true}), and the process CPU time per
 * job. Run after {@code mvn -pl kvtier-core test-compile}, with Redis up ({@code eval "$(.ci/redis-up)"}):
 * <pre>
 * java -Dkvtier.remote.trace=true -cp kvtier-core/target/classes:kvtier-core/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.offload.transfer.RemoteReadComparison $KVTIER_REDIS_URL [ROUNDS]
 * </pre>
 */
public final class RemoteReadComparison {

    private static final int CHUNKS = 62;
    private static final int TOKENS = 16;
    private static final long PAYLOAD = 1_179_648; // 16 tokens x 12 layers x 2 x 768 x 4 bytes
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

    private static ChunkCopy copy(int slot, long i) {
        return new ChunkCopy(new int[] {-1}, slot, NS, key(i), i == 0 ? NS : key(i - 1), tokens(i));
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String tenant = "cmp" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        try (HostSlab slab = new HostSlab(2 * CHUNKS, PAYLOAD, TOKENS);
             LettuceRemoteStore store = LettuceRemoteStore.open(
                     RemoteSettings.of(List.of(url), false, tenant, null).withTimeout(Duration.ofSeconds(10)), System.err::println)) {
            RemoteKeys keys = new RemoteKeys(tenant, NS);
            long value = ChunkHeader.encodedSize(TOKENS) + PAYLOAD;
            RemoteCopier ramp = new RemoteCopier(slab, store, keys, PAYLOAD, RemoteCopier.READ_WINDOW_BYTES, 2);
            RemoteCopier burst = new RemoteCopier(slab, store, keys, PAYLOAD, RemoteCopier.READ_WINDOW_BYTES,
                    (int) (RemoteCopier.READ_WINDOW_BYTES / value));
            List<ChunkCopy> writes = new ArrayList<>();
            List<ChunkCopy> reads = new ArrayList<>();
            Random rnd = new Random(1);
            byte[] bytes = new byte[(int) PAYLOAD];
            for (int i = 0; i < CHUNKS; i++) {
                MemorySegment payload = slab.payloadOf(i, PAYLOAD);
                rnd.nextBytes(bytes);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, payload, 0, PAYLOAD);
                ChunkHeader.of(NS, key(i), i == 0 ? NS : key(i - 1), tokens(i), PAYLOAD, ChunkHeader.crc32c(payload))
                        .writeTo(slab.headerOf(i), 0);
                writes.add(copy(i, i));
                reads.add(copy(CHUNKS + i, i));
            }
            long job = 1;
            for (int from = 0; from < CHUNKS; from += 4) { // a few values a job: each SET's timeout covers only them
                TransferResult w = ramp.runForBench(new RemoteJob(job++, RemoteJob.Kind.WRITE,
                        writes.subList(from, Math.min(CHUNKS, from + 4)), System.nanoTime() + 60_000_000_000L));
                if (!w.success()) {
                    throw new IllegalStateException("write: " + w.error());
                }
            }
            double[][] wall = new double[2][rounds];
            double[][] cpu = new double[2][rounds];
            double[][] first = new double[2][rounds];
            for (int r = 0; r < rounds + 1; r++) {
                for (int k = 0; k < 2; k++) {
                    int side = (r + k) % 2; // A B, then B A
                    RemoteCopier c = side == 0 ? ramp : burst;
                    long c0 = os.getProcessCpuTime();
                    io.kvtier.tier.remote.RemoteTrace.clear();
                    io.kvtier.tier.remote.RemoteTrace.mark("job");
                    long t0 = System.nanoTime();
                    TransferResult res = c.runForBench(new RemoteJob(job++, RemoteJob.Kind.READ, reads, System.nanoTime() + 60_000_000_000L));
                    long t1 = System.nanoTime();
                    if (!res.success()) {
                        throw new IllegalStateException("read: " + res.error());
                    }
                    if (r > 0) { // the first round warms both up
                        wall[side][r - 1] = (t1 - t0) / 1e6;
                        cpu[side][r - 1] = (os.getProcessCpuTime() - c0) / 1e6;
                        first[side][r - 1] = firstValueMillis();
                    }
                }
            }
            System.out.printf("read of %d values of %.2f MB, %d rounds, load average %.1f%n", CHUNKS, value / 1e6, rounds,
                    os.getSystemLoadAverage());
            String[] names = {"first GETs 2, window opened per answer", "whole window (" + (RemoteCopier.READ_WINDOW_BYTES / value) + " GETs) at once"};
            for (int s = 0; s < 2; s++) {
                System.out.printf("%-42s wall median %8.1f ms (min %.1f), first value median %8.1f ms, process CPU median %8.1f ms%n",
                        names[s], median(wall[s]), Arrays.stream(wall[s]).min().orElse(0), median(first[s]), median(cpu[s]));
            }
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratio[r] = wall[1][r] / wall[0][r];
            }
            System.out.printf("whole window / opened per answer, per round: median %.2f, range %.2f-%.2f%n", median(ratio),
                    Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0));
        }
    }

    /** Milliseconds from the job's start to its first value received, from the trace; NaN without {@code -Dkvtier.remote.trace=true}. */
    private static double firstValueMillis() {
        for (String line : io.kvtier.tier.remote.RemoteTrace.table()) {
            if (line.contains(" received (")) {
                return Double.parseDouble(line.trim().split("\\s+")[0]);
            }
        }
        return Double.NaN;
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
