package io.kvtier.cli;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.RemoteCopier;
import io.kvtier.offload.transfer.RemoteJob;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench offload --remote-url}: the remote tier's store and load throughput (write and
 * read jobs of {@value #PIPELINE} chunks, header and payload, through the real copier and
 * store) beside {@code redis-benchmark} SET and GET of values of the same size on the same
 * server in the same run. Both sides use one connection and {@value #PIPELINE} commands in flight
 * ({@code redis-benchmark -c 1 -P 8}); redis-benchmark gets at least as many values per size as
 * the tier, more when its run would take under {@link #MIN_BENCHMARK_SECONDS}; each size runs a
 * warm-up round of the tier, then {@code repeats} rounds of tier, SET, GET (A B A B: a load
 * swing hits both sides of a round), and the medians are printed, the ratio being the median of
 * the rounds' own ratios.
 */
public final class RemoteBandwidth {

    static final int PIPELINE = 8;
    static final long[] SIZES = {64 << 10, 256 << 10, 1 << 20, 4 << 20};

    private RemoteBandwidth() {
    }

    public static void print(String url, long bytesPerSize, int repeats) {
        System.out.printf("== remote tier throughput against %s, MB/s: both sides one connection, %d commands in flight "
                + "(redis-benchmark -c 1 -P %d), median of %d rounds ==%n", RemoteSettings.redact(url), PIPELINE, PIPELINE, repeats);
        System.out.printf("%10s %12s %12s %12s %12s %10s %10s%n", "chunk", "tier store", "SET", "tier load", "GET",
                "store/SET", "load/GET");
        for (long size : SIZES) {
            int chunks = (int) Math.max(PIPELINE, bytesPerSize / size / PIPELINE * PIPELINE);
            double[][] rounds = new double[6][repeats]; // tier store, SET, tier load, GET, store/SET, load/GET
            try (Tier tier = new Tier(url, size)) {
                tier.run(chunks); // warm-up
                for (int r = 0; r < repeats; r++) {
                    double[] t = tier.run(chunks);
                    double set = benchmark(url, "set", size, chunks);
                    double get = benchmark(url, "get", size, chunks);
                    double[] round = {t[0], set, t[1], get, t[0] / set, t[1] / get};
                    for (int i = 0; i < round.length; i++) {
                        rounds[i][r] = round[i];
                    }
                }
            }
            System.out.printf("%10s %12.0f %12.0f %12.0f %12.0f %10.2f %10.2f%n", (size >> 10) + " KiB", median(rounds[0]),
                    median(rounds[1]), median(rounds[2]), median(rounds[3]), median(rounds[4]), median(rounds[5]));
        }
    }

    /**
     * Connects to the store as the figures will, before any figure is measured.
     *
     * @throws BadInputException naming the URL (redacted) and why, if the store cannot be reached
     *         or refuses the client (wrong password, ACL)
     */
    static void checkReachable(String url) {
        RemoteSettings s = RemoteSettings.of(List.of(url), false, "bench", null);
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (LettuceRemoteStore store = LettuceRemoteStore.open(s, lines::add)) {
            if (store.offReason() != null || !"closed".equals(store.breakerState())) {
                java.util.regex.Matcher why = java.util.regex.Pattern.compile("\\(([^)]*)\\)").matcher(String.join(" ", lines));
                throw new BadInputException("--remote-url " + RemoteSettings.redact(url) + ": " + (store.offReason() != null
                        ? store.offReason() : "cannot reach the store" + (why.find() ? " (" + why.group(1) + ")" : "")));
            }
        }
    }

    /** A remote job of the figures failed (the store went away meanwhile): one line, not a stack trace. */
    private static void check(RemoteCopier copier, RemoteJob.Kind kind, List<ChunkCopy> chunks) {
        var r = copier.runForBench(new RemoteJob(1, kind, chunks, System.nanoTime() + 60_000_000_000L));
        if (!r.success()) {
            throw new BadInputException("bench offload: a remote " + kind.name().toLowerCase(java.util.Locale.ROOT)
                    + " job failed: " + r.error());
        }
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * The tier's side: one store (one connection) and one host slab for a size; every round
     * writes and reads the same keys (overwritten, as redis-benchmark's SET overwrites its key),
     * deleted at the end.
     */
    private static final class Tier implements AutoCloseable {
        private static final int TOKENS = 16;
        private final long payload;
        private final BlockKey ns = new BlockKey(1, 2, 3, new Random().nextLong());
        private final HostSlab slab;
        private final LettuceRemoteStore store;
        private final RemoteKeys keys;
        private final RemoteCopier copier;
        private final byte[] bytes;
        private int written;

        Tier(String url, long payload) {
            this.payload = payload;
            RemoteSettings s = RemoteSettings.of(List.of(url), false, "bench", null).withTimeout(java.time.Duration.ofSeconds(10));
            this.slab = new HostSlab(2 * PIPELINE, payload, TOKENS);
            this.store = LettuceRemoteStore.open(s, line -> System.err.println("kvtier: " + line));
            this.keys = new RemoteKeys("bench", ns);
            this.copier = new RemoteCopier(slab, store, keys, payload);
            this.bytes = new byte[(int) payload];
            new Random(1).nextBytes(bytes);
        }

        /** MB/s of payload stored, then loaded, through the remote copier. */
        double[] run(int chunks) {
            long storeNanos = 0;
            long loadNanos = 0;
            for (int first = 0; first < chunks; first += PIPELINE) {
                List<ChunkCopy> writes = new ArrayList<>();
                List<ChunkCopy> reads = new ArrayList<>();
                for (int i = 0; i < PIPELINE; i++) {
                    BlockKey key = key(first + i);
                    int[] t = new int[TOKENS];
                    Arrays.fill(t, first + i);
                    MemorySegment p = slab.payloadOf(i, payload);
                    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, p, 0, payload);
                    ChunkHeader.of(ns, key, ns, t, payload, ChunkHeader.crc32c(p)).writeTo(slab.headerOf(i), 0);
                    writes.add(new ChunkCopy(new int[] {-1}, i, ns, key, ns, t));
                    reads.add(new ChunkCopy(new int[] {-1}, PIPELINE + i, ns, key, ns, t));
                }
                long t0 = System.nanoTime();
                check(copier, RemoteJob.Kind.WRITE, writes);
                long t1 = System.nanoTime();
                check(copier, RemoteJob.Kind.READ, reads);
                long t2 = System.nanoTime();
                storeNanos += t1 - t0;
                loadNanos += t2 - t1;
            }
            written = Math.max(written, chunks);
            double mb = (double) chunks * payload / 1e6;
            return new double[] {mb / (storeNanos / 1e9), mb / (loadNanos / 1e9)};
        }

        private BlockKey key(int i) {
            return new BlockKey(i, 0, 7, 7);
        }

        @Override
        public void close() {
            for (int i = 0; i < written; i++) {
                store.delete(keys.of(key(i)));
            }
            if (written > 0) {
                // Commands on one connection complete in order: when this answers, the deletes ran.
                store.get(keys.of(key(0))).exceptionally(e -> null).join();
            }
            store.close();
            slab.close();
        }
    }

    /**
     * Least time of a redis-benchmark run, s. It times a run in whole milliseconds: 32 SETs of
     * 256 KiB (8 MiB, about 3 ms here) came out as 32,000 requests/s or {@code inf}. A shorter run
     * is repeated with more requests.
     */
    static final double MIN_BENCHMARK_SECONDS = 0.2;

    /**
     * MB/s of redis-benchmark SET or GET of values of {@code size} bytes: at least {@code requests}
     * requests, more until the run takes {@link #MIN_BENCHMARK_SECONDS}. GET reads the key the
     * SET before it wrote ({@code -d} sizes only SET's values): {@link #print} runs SET first.
     *
     * @throws BadInputException if redis-benchmark is missing, fails, or never prints a finite figure
     */
    private static double benchmark(String url, String op, long size, int requests) {
        URI u = URI.create(url.replaceFirst("^rediss?://", "http://"));
        long n = Math.max(requests, 2 * PIPELINE);
        String out = "";
        for (int run = 0; run < 6; run++) {
            List<String> cmd = List.of("redis-benchmark", "-h", u.getHost(), "-p", String.valueOf(u.getPort()), "-t", op,
                    "-d", String.valueOf(size), "-n", String.valueOf(n), "-c", "1", "-P", String.valueOf(PIPELINE), "--csv");
            out = run(cmd);
            double rps = requestsPerSecond(out, op);
            if (rps > 0 && Double.isFinite(rps) && n / rps >= MIN_BENCHMARK_SECONDS) {
                return rps * size / 1e6;
            }
            // Too short to time (or inf): enough requests for the least time at this rate, at least 4x.
            long want = rps > 0 && Double.isFinite(rps) ? (long) Math.ceil(MIN_BENCHMARK_SECONDS * rps * 1.25) : 0;
            n = (Math.max(4 * n, want) + PIPELINE - 1) / PIPELINE * PIPELINE;
        }
        throw new BadInputException("redis-benchmark printed no finite " + op + " figure over "
                + MIN_BENCHMARK_SECONDS + " s, last with -n " + n + ": " + out.strip());
    }

    /**
     * The requests/s of {@code op} in redis-benchmark's {@code --csv} output
     * ({@code "SET","13212.90",...}); NaN if it printed none, or no number ({@code inf}, when a
     * run took under a millisecond).
     */
    static double requestsPerSecond(String csv, String op) {
        for (String line : csv.split("\n")) {
            String[] f = line.replace("\"", "").split(",");
            if (f.length > 1 && f[0].strip().equalsIgnoreCase(op)) {
                try {
                    return Double.parseDouble(f[1].strip());
                } catch (NumberFormatException e) {
                    return Double.NaN;
                }
            }
        }
        return Double.NaN;
    }

    private static String run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new BadInputException("redis-benchmark failed: " + out.strip());
            }
            return out;
        } catch (IOException e) {
            throw new BadInputException("redis-benchmark not found (install redis-tools): " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
