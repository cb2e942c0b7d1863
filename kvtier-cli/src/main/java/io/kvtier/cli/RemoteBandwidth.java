package io.kvtier.cli;

import io.kvtier.bench.Samples;
import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.AsyncTransferEngine;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.RemoteCopier;
import io.kvtier.offload.transfer.RemoteJob;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import java.io.IOException;
import java.lang.foreign.Arena;
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
 * store; the writes through the transfer engine, whose write jobs overlap) beside {@code redis-benchmark}
 * SET and GET of values of the same size on the same server in the same run. Both sides use one
 * connection and jobs of {@value #PIPELINE} commands ({@code redis-benchmark -c 1 -P 8}; the
 * tier's next write job sends while the one before awaits its answers, as in the engine: up to
 * twice that many SETs in flight) and the same number of values per size ({@link #values}),
 * either side more when its run would take under {@link #MIN_BENCHMARK_SECONDS}; each size runs
 * a warm-up round of the tier, then {@code repeats} rounds of tier, SET, GET (A B A B: a load swing
 * hits both sides of a round), and the medians are printed, the ratio being the median of the
 * rounds' own ratios. On a cluster ({@code --remote-mode cluster}) the tier's keys spread over the
 * masters and redis-benchmark runs against the master of its key.
 */
public final class RemoteBandwidth {

    static final int PIPELINE = 8;
    /**
     * The one key redis-benchmark's SET and GET use (its own name, {@code -r} not given): deleted
     * after each of its runs (a key of that name the server held before is overwritten by it).
     */
    static final String BENCHMARK_KEY = "key:__rand_int__";
    static final long[] SIZES = {64 << 10, 256 << 10, 1 << 20, 4 << 20};

    /**
     * Distinct keys the tier's side writes per size, a multiple of {@value #PIPELINE} (a job never
     * has a key twice): more values overwrite them in turn, as redis-benchmark overwrites its one
     * key, so 256 values of 4 MiB hold 256 MiB on the server, not 1 GiB.
     */
    static final int TIER_KEYS = 64;

    private RemoteBandwidth() {
    }

    /**
     * Values per size for both sides: at least {@code requests} and at least {@code minBytes} of
     * them, rounded up to a multiple of {@value #PIPELINE}.
     */
    static int values(long size, int requests, long minBytes) {
        long n = Math.max(requests, (minBytes + size - 1) / size);
        return (int) Math.min(Integer.MAX_VALUE / 2, (n + PIPELINE - 1) / PIPELINE * PIPELINE);
    }

    /**
     * The header's connections, as the tier uses them: on a plain-TCP standalone store its SETs of
     * {@link LettuceRemoteStore#DIRECT_SET_MIN_BYTES} and more go over a second connection of
     * their own (the GETs and smaller SETs over the first), and its overlapping write jobs keep
     * up to {@link AsyncTransferEngine#REMOTE_WRITE_WORKERS} jobs' SETs in flight (a new user's
     * trial: the header said "both sides one connection, 8 commands in flight").
     */
    static String connections(RemoteSettings store, URI target) {
        String sets = "up to " + AsyncTransferEngine.REMOTE_WRITE_WORKERS * PIPELINE + " SETs in flight";
        if (store.cluster()) {
            return String.format("the tier one connection to each master, %s; redis-benchmark one connection to %s:%d (the "
                    + "master of %s), %d commands in flight", sets, target.getHost(), target.getPort(), BENCHMARK_KEY, PIPELINE);
        }
        long direct = LettuceRemoteStore.DIRECT_SET_MIN_BYTES;
        boolean second = LettuceRemoteStore.DIRECT_SETS && !store.urls().get(0).startsWith("rediss://")
                && direct <= SIZES[SIZES.length - 1];
        String tier = !second ? "the tier one connection, " + sets
                : "the tier one connection for GETs and smaller SETs and one for SETs of " + whole(direct) + " and more ("
                        + sizesFrom(direct) + " here), " + sets;
        return tier + "; redis-benchmark one connection, " + PIPELINE + " commands in flight";
    }

    /** The table's sizes from {@code least} on, as a range: {@code 256 KiB-4 MiB}. */
    private static String sizesFrom(long least) {
        long first = Arrays.stream(SIZES).filter(s -> s >= least).min().orElseThrow();
        long last = SIZES[SIZES.length - 1];
        return first == last ? whole(last) : whole(first) + "-" + whole(last);
    }

    /** A power-of-two size in whole units: {@code 128 KiB}, {@code 4 MiB}. */
    private static String whole(long bytes) {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }

    /**
     * Prints the table. On a cluster the tier's keys spread over the masters (a connection to
     * each) and redis-benchmark runs against the master of {@link #BENCHMARK_KEY} (one connection:
     * any other master would answer MOVED).
     *
     * @param run the store and the run's tenant, under which the tier writes
     * @throws BadInputException if the store stops answering or a run of redis-benchmark fails: one line
     * @throws java.util.concurrent.CancellationException if a signal stopped the run
     */
    static void print(RemoteBenchRun run, int requests, long bytesPerSize, int repeats) {
        RemoteSettings store = run.store();
        URI target = benchmarkTarget(store);
        System.out.printf("== remote tier throughput against %s, MB/s: %s (redis-benchmark -c 1 -P %d; the tier's write jobs "
                + "overlap as in the engine, the next one's SETs sent while the one before awaits its answers), median of %s; at "
                + "least %d values and %d MiB per size, a multiple of %d values (either side more until its run takes %.1f s) ==%n",
                label(store), connections(store, target), PIPELINE, io.kvtier.text.Plural.count(repeats, "round"), requests,
                bytesPerSize >> 20, PIPELINE, MIN_BENCHMARK_SECONDS);
        System.out.printf("%10s %8s %12s %12s %12s %12s %10s %10s %10s%n", "chunk", "values", "tier store", "SET", "tier load",
                "GET", "store/SET", "load/GET", "rb values");
        for (long size : SIZES) {
            int chunks = values(size, requests, bytesPerSize);
            double[][] rounds = new double[6][repeats]; // tier store, SET, tier load, GET, store/SET, load/GET
            long rbValues = Long.MAX_VALUE;
            long tierValues = Long.MAX_VALUE;
            try (Tier tier = new Tier(run, size)) {
                tier.run(chunks); // warm-up
                for (int r = 0; r < repeats; r++) {
                    double[] t = tier.run(chunks);
                    tierValues = Math.min(tierValues, (long) t[2]);
                    Benchmark b;
                    try {
                        b = benchmark(run, target, size, chunks);
                    } finally {
                        if (!run.stopping()) { // after a signal the hook deletes it, and says so
                            tier.store.delete(BENCHMARK_KEY); // redis-benchmark's own key: not left behind, also when it failed
                        }
                    }
                    rbValues = Math.min(rbValues, b.values());
                    double[] round = {t[0], b.set(), t[1], b.get(), t[0] / b.set(), t[1] / b.get()};
                    for (int i = 0; i < round.length; i++) {
                        rounds[i][r] = round[i];
                    }
                }
            }
            System.out.printf("%10s %8d %12s %12s %12s %12s %10.2f %10.2f %10d%n", (size >> 10) + " KiB", tierValues,
                    mbps(Samples.median(rounds[0])), mbps(Samples.median(rounds[1])), mbps(Samples.median(rounds[2])),
                    mbps(Samples.median(rounds[3])), Samples.median(rounds[4]), Samples.median(rounds[5]), rbValues);
        }
    }

    /** MB/s, whole from 10 on, else to two significant digits: a TLS load of 0.45 MB/s (loaded machine) printed "0". */
    static String mbps(double v) {
        return v >= 9.5 ? String.format(java.util.Locale.ROOT, "%.0f", v)
                : new java.math.BigDecimal(v).round(new java.math.MathContext(2)).toPlainString();
    }

    /** The server redis-benchmark runs against: the URL's, or on a cluster the master of {@link #BENCHMARK_KEY}. */
    private static URI benchmarkTarget(RemoteSettings store) {
        return store.cluster() ? BenchKeys.masterOf(store, BENCHMARK_KEY) : BenchKeys.endpoint(store.urls().getFirst());
    }

    /**
     * Connects to the store as the figures will, and writes (then deletes) one key of each side,
     * then runs redis-benchmark once as the table will (one SET of one byte), before any figure is
     * measured: a user whose ACL confines it to other keys, or a password redis-benchmark's AUTH
     * fails with where the tier's passed (a password given to a server without one), is one line
     * here, not an error after the table's header (new users' trials).
     *
     * @throws BadInputException naming the URL (redacted) and why, if the store cannot be reached
     *         or refuses the client (wrong password, ACL), or redis-benchmark is missing or fails
     */
    static void checkReachable(RemoteBenchRun run) {
        RemoteSettings settings = run.store();
        String probeKey = "kvt:v1:" + run.tenant() + ":probe";
        run.enter();
        try (LettuceRemoteStore store = open(settings.withTenant(run.tenant()), run)) {
            for (String key : List.of(probeKey, BENCHMARK_KEY)) {
                try {
                    store.set(key, new byte[] {0}).get(30, java.util.concurrent.TimeUnit.SECONDS);
                    store.delete(key);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    String why = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null
                            ? e.getCause().getMessage() : "no answer within 30 s";
                    if (store.offReason() != null && !why.contains("NOPERM")) {
                        // The tier's own words, as generate says them: a cluster node given in standalone mode (MOVED) was
                        // blamed on the ACL below (a new user's trial).
                        throw new BadInputException(refused(settings, run.fitted(store.offReason())));
                    }
                    throw new BadInputException(refused(settings, "cannot write " + key + " (" + why
                            + "): bench offload's tier writes kvt:v1:bench* keys and redis-benchmark writes " + BENCHMARK_KEY
                            + ", so its user's ACL must allow both"));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new BadInputException("bench offload: interrupted");
                }
            }
            try {
                checkBenchmark(run);
            } finally {
                if (!run.stopping()) {
                    store.delete(BENCHMARK_KEY); // the SET of the check's
                    store.get(BENCHMARK_KEY).exceptionally(e -> null).join(); // one connection: its DEL ran
                }
            }
        } finally {
            run.exit();
        }
    }

    /**
     * One SET of one byte by redis-benchmark, as the table's runs connect (host, port, AUTH, TLS,
     * database).
     *
     * @throws BadInputException if redis-benchmark is missing or fails: its AUTH refused (what to do
     *         about the password given or not), or anything else it printed
     */
    private static void checkBenchmark(RemoteBenchRun run) {
        List<String> cmd = benchmarkCommand(run.store(), benchmarkTarget(run.store()), List.of("-t", "set", "-d", "1", "-n", "1",
                "-c", "1", "--csv"));
        Ran ran = exec(cmd, run);
        if (ran.status() == 0) {
            return;
        }
        // The server's reply, the line after redis-benchmark's "Node HOST:PORT replied with error:".
        String reply = ran.out().lines().map(String::strip).filter(l -> l.matches("(ERR|NOAUTH|WRONGPASS|NOPERM)\\b.*"))
                .findFirst().orElse(null);
        String advice = reply == null ? null : run.authAdvice(reply);
        throw new BadInputException(refused(run.store(), advice != null ? "authentication failed (" + reply + "): " + advice
                : "redis-benchmark fails against it: " + shown(cmd) + " printed " + oneLine(ran.out())));
    }

    /**
     * The store, connected, or one line naming the URL (redacted) and why not: it cannot be
     * reached, does not answer, or refuses the client (wrong password, ACL). The client's own
     * lines (the engine's "every lookup misses until it answers") do not fit a bench, which stops.
     */
    private static LettuceRemoteStore open(RemoteSettings s, RemoteBenchRun run) {
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        LettuceRemoteStore store = LettuceRemoteStore.open(s, lines::add);
        if (store.offReason() != null || !"closed".equals(store.breakerState())) {
            store.close();
            java.util.regex.Matcher why = java.util.regex.Pattern.compile("\\(([^)]*)\\)").matcher(String.join(" ", lines));
            throw new BadInputException(refused(s, store.offReason() != null
                    ? run.fitted(store.offReason()) : "cannot reach the store" + (why.find() ? " (" + why.group(1) + ")" : "")));
        }
        return store;
    }

    /** The store's URLs (redacted), as {@code --remote-url} gave them: one, or a cluster's seeds. */
    static String where(RemoteSettings s) {
        return String.join(", ", s.urls().stream().map(RemoteSettings::redact).toList());
    }

    /** The store in a figure's header: its URL (redacted), or a cluster's first seed and how many seeds. */
    static String label(RemoteSettings s) {
        String first = RemoteSettings.redact(s.urls().getFirst());
        return !s.cluster() ? first : "the cluster of " + first + (s.urls().size() > 1 ? " (" + s.urls().size() + " seeds)" : "");
    }

    /**
     * The one line of a store that refused the bench: {@code --remote-url URL: reason}, or
     * {@code --remote-url reason} when the reason starts with the URL (the tier's own line for a
     * cluster node given in standalone mode: {@code redis://... is a cluster node (MOVED ...): give
     * --remote-mode cluster}, as {@code generate} says it).
     */
    static String refused(RemoteSettings s, String reason) {
        return "--remote-url " + (reason.startsWith(where(s)) ? reason : where(s) + ": " + reason);
    }

    /** A remote job of the figures failed (the store went away, or turned itself off, meanwhile): one line, not a stack trace. */
    private static void check(RemoteCopier copier, RemoteJob.Kind kind, List<ChunkCopy> chunks) {
        check(copier, kind, copier.runForBench(new RemoteJob(1, kind, chunks, System.nanoTime() + JOB_NANOS)));
    }

    private static void check(RemoteCopier copier, RemoteJob.Kind kind, TransferResult r) {
        String off = copier.store().offReason();
        if (!r.success() && off != null) {
            throw new BadInputException("bench offload: a remote " + kind.name().toLowerCase(java.util.Locale.ROOT)
                    + " job failed: remote tier off: " + off);
        }
        if (!r.success()) {
            throw new BadInputException("bench offload: a remote " + kind.name().toLowerCase(java.util.Locale.ROOT)
                    + " job failed: " + r.error());
        }
    }

    /** Deadline of a job of the figures: far, a bench waits for its store. */
    private static final long JOB_NANOS = 60_000_000_000L;

    /**
     * Write jobs the tier's side keeps submitted at once, each on slots of its own: as the
     * scheduler submits a step's write while earlier ones are in flight, so the engine's write
     * workers always have the next job to send ({@link AsyncTransferEngine#REMOTE_WRITE_WORKERS}).
     */
    static final int WRITE_JOBS_IN_FLIGHT = 3;

    /**
     * The tier's side: one store (one connection), one host slab and one transfer engine for a
     * size; every round writes and reads the same keys, at most {@link #TIER_KEYS} (overwritten in
     * turn, as redis-benchmark's SET overwrites its key), deleted at the end.
     */
    private static final class Tier implements AutoCloseable {
        private static final int TOKENS = 16;
        private final RemoteBenchRun run;
        private final long payload;
        private final BlockKey ns = new BlockKey(1, 2, 3, new Random().nextLong());
        private final HostSlab slab;
        private final LettuceRemoteStore store;
        private final RemoteKeys keys;
        private final RemoteCopier copier;
        /** One device block: the engine's copier needs one; remote writes touch none. */
        private final Arena device = Arena.ofShared();
        private final AsyncTransferEngine engine;
        /** CRC32C of every write slot's payload (the same bytes in each). */
        private final int crc;
        private long nextJob = 1;
        private int written;

        Tier(RemoteBenchRun run, long payload) {
            this.run = run;
            this.payload = payload;
            run.enter();
            try {
                this.store = open(run.store().withTenant(run.tenant()).withTimeout(java.time.Duration.ofSeconds(10)), run);
            } catch (RuntimeException e) {
                device.close();
                run.exit();
                throw e;
            }
            this.slab = new HostSlab((WRITE_JOBS_IN_FLIGHT + 1) * PIPELINE, payload, TOKENS); // then the reads' slots
            this.keys = new RemoteKeys(run.tenant(), ns);
            this.copier = new RemoteCopier(slab, store, keys, payload);
            this.engine = new AsyncTransferEngine(new ChunkCopier(device.allocate(payload), payload, slab), null, copier);
            byte[] bytes = new byte[(int) payload];
            new Random(1).nextBytes(bytes);
            for (int i = 0; i < WRITE_JOBS_IN_FLIGHT * PIPELINE; i++) {
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, slab.payloadOf(i, payload), 0, payload);
            }
            this.crc = ChunkHeader.crc32c(slab.payloadOf(0, payload));
        }

        /**
         * MB/s of payload stored, then loaded, through the remote copier, and the values of each:
         * as redis-benchmark's {@code -t set,get} does, every store first, then the loads, each
         * side at least {@code chunks} values and more until its jobs took
         * {@link #MIN_BENCHMARK_SECONDS} (a short run is timed slower: 32 jobs of 256 KiB stored
         * 1,160-1,490 MB/s where 256 jobs stored 1,950-2,180, in RemoteWriteComparison). The
         * stores are write jobs through the transfer engine, {@link #WRITE_JOBS_IN_FLIGHT} submitted
         * at once, timed from the first submission to the last result; the loads, read jobs one
         * after another on this thread, read the keys the stores wrote last, in turn.
         */
        double[] run(int chunks) {
            int stored = 0;
            int[] lastWrite = new int[TIER_KEYS]; // the value each key holds: its tokens are that index
            java.util.ArrayDeque<Long> inFlight = new java.util.ArrayDeque<>();
            long start = System.nanoTime();
            for (int job = 0; stored < chunks || System.nanoTime() - start < MIN_BENCHMARK_SECONDS * 1e9; job++, stored += PIPELINE) {
                run.checkRunning();
                if (inFlight.size() == WRITE_JOBS_IN_FLIGHT) {
                    awaitWrite(inFlight.poll()); // its slots are free again
                }
                written = Math.max(written, Math.min(stored + PIPELINE, TIER_KEYS)); // before the job: it may fail half done
                List<ChunkCopy> writes = new ArrayList<>();
                for (int i = 0; i < PIPELINE; i++) {
                    int k = (stored + i) % TIER_KEYS;
                    int slot = job % WRITE_JOBS_IN_FLIGHT * PIPELINE + i;
                    lastWrite[k] = stored + i;
                    int[] t = tokens(stored + i);
                    ChunkHeader.of(ns, key(k), ns, t, payload, crc).writeTo(slab.headerOf(slot), 0);
                    writes.add(new ChunkCopy(new int[] {-1}, slot, ns, key(k), ns, t));
                }
                long id = nextJob++;
                engine.submit(new RemoteJob(id, RemoteJob.Kind.WRITE, writes, engine.nanoTime() + JOB_NANOS));
                inFlight.add(id);
            }
            while (!inFlight.isEmpty()) {
                awaitWrite(inFlight.poll());
            }
            long storeNanos = System.nanoTime() - start;
            int keys = Math.min(stored, TIER_KEYS);
            long loadNanos = 0;
            int loaded = 0;
            for (; loaded < chunks || loadNanos < MIN_BENCHMARK_SECONDS * 1e9; loaded += PIPELINE) {
                run.checkRunning();
                List<ChunkCopy> reads = new ArrayList<>();
                for (int i = 0; i < PIPELINE; i++) {
                    int k = (loaded + i) % keys;
                    reads.add(new ChunkCopy(new int[] {-1}, WRITE_JOBS_IN_FLIGHT * PIPELINE + i, ns, key(k), ns,
                            tokens(lastWrite[k])));
                }
                long t0 = System.nanoTime();
                check(copier, RemoteJob.Kind.READ, reads);
                loadNanos += System.nanoTime() - t0;
            }
            return new double[] {stored * (payload / 1e6) / (storeNanos / 1e9), loaded * (payload / 1e6) / (loadNanos / 1e9),
                    Math.min(stored, loaded)};
        }

        /** Waits for write job {@code id}'s result: one line if it failed or did not end in time. */
        private void awaitWrite(long id) {
            List<TransferResult> r = engine.await(List.of(id), java.time.Duration.ofNanos(JOB_NANOS));
            check(copier, RemoteJob.Kind.WRITE, r.isEmpty()
                    ? TransferResult.failed(id, 0, JOB_NANOS, 0, "no result within " + JOB_NANOS / 1_000_000_000L + " s") : r.getFirst());
        }

        private static int[] tokens(int value) {
            int[] t = new int[TOKENS];
            Arrays.fill(t, value);
            return t;
        }

        private BlockKey key(int i) {
            return new BlockKey(i, 0, 7, 7);
        }

        @Override
        public void close() {
            engine.close(); // joins its write workers, each after its job's answers: no SET lands after the deletes
            if (!run.stopping()) { // after a signal the hook deletes the run's keys, and says so
                for (int i = 0; i < written; i++) {
                    store.delete(keys.of(key(i)));
                }
                // Commands on one connection complete in order (a cluster: one connection per master, each
                // key's on its master's): when a key's GET answers, its delete ran.
                for (int i = 0; i < written; i++) {
                    store.get(keys.of(key(i))).exceptionally(e -> null).join();
                }
            }
            store.close();
            slab.close();
            device.close();
            run.exit();
        }
    }

    /**
     * Least time of a redis-benchmark run of SET, and of GET, s. It times a run in whole
     * milliseconds: 32 SETs of 256 KiB (8 MiB, about 3 ms here) came out as 32,000 requests/s or
     * {@code inf}. A shorter run is repeated with more requests.
     */
    static final double MIN_BENCHMARK_SECONDS = 0.2;

    /** redis-benchmark's SET and GET MB/s of one size, and the values each of them sent. */
    record Benchmark(double set, double get, long values) {
    }

    /**
     * redis-benchmark's SET and GET of values of {@code size} bytes, in one invocation
     * ({@code -t set,get}): at least {@code requests} of each, more until both take
     * {@link #MIN_BENCHMARK_SECONDS}. One invocation because GET ignores {@code -d}: it reads
     * {@code key:__rand_int__} (one key, no {@code -r}), which holds what the SET before it wrote;
     * {@code -t get} alone reads whatever value an earlier run left there (a 256 KiB SET, then
     * {@code -t get -d 100}, reads 256 KiB). With the SET in the same run, every GET reads a value
     * of {@code size} bytes.
     *
     * @throws BadInputException if redis-benchmark is missing or fails, prints a figure that is
     *         not a finite positive number, or still prints {@code inf} with many more requests:
     *         one line naming the command and what it printed
     */
    private static Benchmark benchmark(RemoteBenchRun run, URI target, long size, int requests) {
        long n = Math.max(requests, 2 * PIPELINE);
        String last = "";
        for (int attempt = 0; attempt < 6; attempt++) {
            List<String> cmd = benchmarkCommand(run.store(), target, List.of("-t", "set,get", "-d", String.valueOf(size), "-n",
                    String.valueOf(n), "-c", "1", "-P", String.valueOf(PIPELINE), "--csv"));
            Ran ran = exec(cmd, run);
            if (ran.status() != 0) {
                throw new BadInputException(shown(cmd) + " failed: " + oneLine(ran.out()));
            }
            String out = ran.out();
            double set = requestsPerSecond(out, "set");
            double get = requestsPerSecond(out, "get");
            for (String op : List.of("SET", "GET")) {
                double rps = op.equals("SET") ? set : get;
                if (!(rps > 0)) { // NaN (no figure, not a number), zero or negative: refused, inf is retried below
                    throw new BadInputException(shown(cmd) + ": no finite positive " + op + " requests/s in what it printed: "
                            + oneLine(out));
                }
            }
            if (Double.isFinite(set) && Double.isFinite(get) && n / set >= MIN_BENCHMARK_SECONDS && n / get >= MIN_BENCHMARK_SECONDS) {
                return new Benchmark(set * size / 1e6, get * size / 1e6, n);
            }
            // Too short to time (or inf): enough requests for the least time at the faster rate, at least 4x.
            double fastest = Math.max(set, get);
            long want = Double.isFinite(fastest) ? (long) Math.ceil(MIN_BENCHMARK_SECONDS * fastest * 1.25) : 0;
            n = (Math.max(4 * n, want) + PIPELINE - 1) / PIPELINE * PIPELINE;
            last = shown(cmd) + " printed " + oneLine(out);
        }
        throw new BadInputException("redis-benchmark ran under " + MIN_BENCHMARK_SECONDS + " s (or printed inf) six times; last, "
                + last);
    }

    /** A command line as an error line shows it: the password after {@code -a} hidden. */
    static String shown(List<String> cmd) {
        List<String> s = new ArrayList<>(cmd);
        for (int i = 0; i + 1 < s.size(); i++) {
            if (s.get(i).equals("-a")) {
                s.set(i + 1, "***");
            }
        }
        return String.join(" ", s);
    }

    /** redis-benchmark's output on one line (its CSV lines joined by {@code " | "}), for an error line. */
    private static String oneLine(String out) {
        String s = String.join(" | ", out.strip().lines().map(String::strip).filter(l -> !l.isEmpty()).toList());
        return s.isEmpty() ? "(nothing)" : s;
    }

    /**
     * The requests/s of {@code op} in redis-benchmark's {@code --csv} output
     * ({@code "SET","13212.90",...}): infinite for {@code inf} (a run that took under a
     * millisecond), NaN if it printed no line of {@code op} or no number.
     */
    static double requestsPerSecond(String csv, String op) {
        for (String line : csv.split("\n")) {
            String[] f = line.replace("\"", "").split(",");
            if (f.length > 1 && f[0].strip().equalsIgnoreCase(op)) {
                String v = f[1].strip();
                if (v.equalsIgnoreCase("inf") || v.equalsIgnoreCase("+inf")) {
                    return Double.POSITIVE_INFINITY;
                }
                try {
                    double d = Double.parseDouble(v);
                    return Double.isInfinite(d) ? Double.NaN : d; // "Infinity" is no redis-benchmark figure
                } catch (NumberFormatException e) {
                    return Double.NaN;
                }
            }
        }
        return Double.NaN;
    }

    /**
     * redis-benchmark against {@code target} with {@code args}, connecting as the tier does: the
     * password ({@code -a}, and {@code --user} for the URL's user), TLS and its CA file, the URL's database.
     */
    private static List<String> benchmarkCommand(RemoteSettings store, URI target, List<String> args) {
        String url = store.urls().getFirst();
        URI u = BenchKeys.endpoint(url);
        List<String> cmd = new ArrayList<>(List.of("redis-benchmark", "-h", target.getHost(), "-p", String.valueOf(target.getPort())));
        cmd.addAll(args);
        if (store.password() != null) { // on redis-benchmark's command line: -a is its only way (it warns, on stderr, that it is visible)
            cmd.addAll(List.of("-a", store.password()));
            if (u.getUserInfo() != null) {
                cmd.addAll(List.of("--user", u.getUserInfo()));
            }
        }
        if (url.startsWith("rediss://")) {
            cmd.add("--tls");
            if (store.caFile() != null) {
                cmd.addAll(List.of("--cacert", store.caFile().toString()));
            }
        }
        String db = u.getPath() == null ? "" : u.getPath().replaceFirst("^/", "");
        if (!db.isEmpty()) {
            cmd.addAll(List.of("--dbnum", db));
        }
        return cmd;
    }

    /** What a run of redis-benchmark printed (standard error with its output) and its exit status (-1: no exit in 120 s). */
    private record Ran(int status, String out) {
    }

    /**
     * Runs redis-benchmark as a child that a signal's hook stops ({@link RemoteBenchRun#start}).
     *
     * @throws BadInputException if it is not installed
     * @throws java.util.concurrent.CancellationException if a signal stopped the run
     */
    private static Ran exec(List<String> cmd, RemoteBenchRun run) {
        Process p;
        try {
            p = run.start(new ProcessBuilder(cmd).redirectErrorStream(true));
        } catch (IOException e) {
            throw new BadInputException("redis-benchmark not found (install redis-tools): " + e.getMessage());
        }
        try {
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Ran(-1, out);
            }
            run.checkRunning(); // killed by the hook: not redis-benchmark's failure
            return new Ran(p.exitValue(), out);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            run.ended(p);
        }
    }
}
