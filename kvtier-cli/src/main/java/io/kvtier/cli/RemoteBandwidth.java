package io.kvtier.cli;

import io.kvtier.bench.JitWarmUp;
import io.kvtier.bench.Samples;
import io.kvtier.offload.transfer.AsyncTransferEngine;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteSettings;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench offload --remote-url}: the remote tier's store and load throughput (write and
 * read jobs of {@value #PIPELINE} chunks, header and payload, through the real copier and
 * store; the writes through the transfer engine, whose write jobs overlap) beside {@code redis-benchmark}
 * SET and GET of values of the same size on the same server in the same run. Both sides use one
 * connection and jobs of {@value #PIPELINE} commands ({@code redis-benchmark -c 1 -P 8}; the
 * tier's next write job sends while the one before awaits its answers, as in the engine: up to
 * twice that many SETs in flight) and the same number of values per size ({@link #values}),
 * either side more when its run would take under {@link #MIN_BENCHMARK_SECONDS}; each size warms
 * the tier up with its own rounds ({@link #warmUp}), then {@code repeats} rounds of tier, SET, GET (A B A B: a load swing
 * hits both sides of a round), and the medians are printed, the ratio being the median of the
 * rounds' own ratios. On a cluster ({@code --remote-mode cluster}) the tier's keys spread over the
 * masters and redis-benchmark runs against the master of its key.
 */
public final class RemoteBandwidth {

    static final int PIPELINE = 8;

    /**
     * Each size's warm-up of the tier: at least 2 s, until the JIT is quiet or before a round that
     * would end past 5 s. One round of 0.2 s (before the twenty-eighth session) timed code that was
     * still getting faster: in a fresh JVM the same stores climb for seconds (a scratch client's
     * plain socket SETs too: 1,206 MB/s in its first eighth, 2,694 in its last), and 256 KiB stored
     * at 0.40-0.47 of redis-benchmark's SET where 3 s of rounds gave 0.60-0.70. Until the JIT is
     * quiet alone ran 20 s a size: the engine's code keeps compiling a little.
     */
    private static JitWarmUp warmUp() {
        return JitWarmUp.ofThisJvm(5_000_000_000L);
    }

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
        List<String> warmUps = new ArrayList<>();
        for (long size : SIZES) {
            int chunks = values(size, requests, bytesPerSize);
            double[][] rounds = new double[6][repeats]; // tier store, SET, tier load, GET, store/SET, load/GET
            long rbValues = Long.MAX_VALUE;
            long tierValues = Long.MAX_VALUE;
            try (RemoteBenchTier tier = new RemoteBenchTier(run, size)) {
                warmUps.add((size >> 10) + " KiB " + warmUp().run(() -> tier.run(chunks)).describe());
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
        System.out.printf("warm-up of the tier: %s (each size: %s)%n", String.join(", ", warmUps), warmUp().schedule());
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
     * fails with (a password given to a server without one, which the tier's connection now refuses
     * first), is one line here, not an error after the table's header (new users' trials).
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
    static LettuceRemoteStore open(RemoteSettings s, RemoteBenchRun run) {
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
