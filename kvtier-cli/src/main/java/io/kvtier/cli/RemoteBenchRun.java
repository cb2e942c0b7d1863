package io.kvtier.cli;

import io.kvtier.text.Plural;
import io.kvtier.tier.remote.RemoteSettings;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;

/**
 * What one {@code bench offload --remote-url} run writes on the store, and its removal when a
 * signal stops the run. The tier's side, its probe and the TTFT figure write under a tenant of the
 * run's own ({@code kvt:v1:benchXXXXXX:*}); redis-benchmark writes {@link RemoteBandwidth#BENCHMARK_KEY}.
 * The figures delete their keys as they go, but a signal stops them mid-write (a new user's trial:
 * 64 keys of 1 MiB and redis-benchmark's key stayed on the server), so then the shutdown hook
 * stops redis-benchmark, waits until no figure writes ({@link #enter}, {@link #exit}) and removes
 * the run's keys itself ({@link #stopAndRemove}); the figures leave that to it
 * ({@link #stopping}), so that its one line counts everything.
 */
final class RemoteBenchRun {

    /** Longest wait of the hook for redis-benchmark to exit after its SIGTERM, then for a SIGKILL. */
    private static final long CHILD_EXIT_SECONDS = 2;

    private final RemoteSettings store;
    private final String tenant;
    private final String passwordSource;
    private volatile boolean stopping;
    private int writers;               // guarded by this: figures writing now
    private boolean wrote;             // guarded by this: anything of the run may be on the server
    private boolean benchmarkRan;      // guarded by this: redis-benchmark wrote its key at least once
    private Process benchmark;         // guarded by this: the redis-benchmark running now, or null

    /**
     * @param store          the store of {@code --remote-url} (its tenant unused)
     * @param passwordSource where the password came from ({@link RemoteConnectionOptions#passwordSource}), or null
     */
    RemoteBenchRun(RemoteSettings store, String passwordSource) {
        this.store = store;
        this.passwordSource = passwordSource;
        this.tenant = String.format("bench%06x", new Random().nextInt(1 << 24));
    }

    RemoteSettings store() {
        return store;
    }

    /** The run's tenant: every key of the tier's side and the TTFT figure is {@code kvt:v1:TENANT:*}. */
    String tenant() {
        return tenant;
    }

    /** {@link RemoteConnectionOptions#fitted}: the tier's reason for turning off, its advice fitted to the password given or not. */
    String fitted(String reason) {
        return RemoteConnectionOptions.fitted(reason, passwordSource, RemoteConnectionOptions.namesUser(store.urls()));
    }

    /** {@link RemoteConnectionOptions#authAdvice} for a reply of the server to redis-benchmark; null if it is no refusal of its credentials. */
    String authAdvice(String reply) {
        return RemoteConnectionOptions.authAdvice(reply, passwordSource, RemoteConnectionOptions.namesUser(store.urls()));
    }

    /** Whether a signal stopped the run: the figures stop at their next step and leave their keys to the hook. */
    boolean stopping() {
        return stopping;
    }

    /**
     * A figure starts writing to the store; {@link #exit} when it wrote its last.
     *
     * @throws CancellationException if a signal stopped the run
     */
    synchronized void enter() {
        checkRunning();
        writers++;
        wrote = true;
    }

    /** A figure of {@link #enter} writes no more. */
    synchronized void exit() {
        writers--;
        notifyAll();
    }

    /**
     * Between two steps of a figure: goes on, or stops the figure after a signal.
     *
     * @throws CancellationException if a signal stopped the run
     */
    void checkRunning() {
        if (stopping) {
            throw new CancellationException("bench offload: stopped by a signal");
        }
    }

    /**
     * Starts redis-benchmark, which the hook stops after a signal; {@link #ended} once it exited.
     *
     * @throws CancellationException if a signal stopped the run
     */
    synchronized Process start(ProcessBuilder command) throws IOException {
        checkRunning();
        benchmark = command.start();
        benchmarkRan = true;
        wrote = true;
        return benchmark;
    }

    /** A redis-benchmark of {@link #start} exited. */
    synchronized void ended(Process p) {
        if (benchmark == p) {
            benchmark = null;
        }
    }

    /**
     * The shutdown hook's first part, before it interrupts the bench thread (whose figures then
     * leave their keys to {@link #remove}): stops the run and redis-benchmark (SIGTERM, then SIGKILL).
     */
    void stop() throws InterruptedException {
        Process child;
        synchronized (this) {
            stopping = true;
            child = benchmark;
        }
        if (child != null) {
            child.destroy();
            if (!child.waitFor(CHILD_EXIT_SECONDS, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor(CHILD_EXIT_SECONDS, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * The shutdown hook's second part, after {@link #stop}: waits at most {@code graceSeconds}
     * until no figure writes, then deletes the run's keys and redis-benchmark's key, again until a
     * pass finds none (a SET sent before a figure stopped may land after the first pass).
     *
     * @return the line saying what it removed, or null if the run had written nothing
     */
    String remove(long graceSeconds) throws InterruptedException {
        boolean benchmarkKey;
        synchronized (this) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(graceSeconds);
            while (writers > 0 && System.nanoTime() < end) {
                TimeUnit.NANOSECONDS.timedWait(this, end - System.nanoTime());
            }
            if (!wrote) {
                return null;
            }
            benchmarkKey = benchmarkRan;
        }
        String what = pattern() + (benchmarkKey ? " and " + RemoteBandwidth.BENCHMARK_KEY : "");
        try {
            long keys = 0;
            long rbKey = 0;
            for (int pass = 0; pass < 5; pass++) {
                long found = BenchKeys.deleteTenant(store, tenant);
                long rb = benchmarkKey ? BenchKeys.delete(store, RemoteBandwidth.BENCHMARK_KEY) : 0;
                keys += found;
                rbKey += rb;
                if (found + rb == 0) {
                    break;
                }
                Thread.sleep(50);
            }
            return "bench offload: stopped by a signal; " + removed(keys, rbKey > 0);
        } catch (RuntimeException e) {
            return "bench offload: stopped by a signal; could not delete " + what + " from " + RemoteBandwidth.where(store)
                    + " (" + e.getMessage() + ")";
        }
    }

    /** What the hook removed, for its line: "removed 54 keys kvt:v1:bench3fa2c1:* and key:__rand_int__ from URL". */
    String removed(long tenantKeys, boolean benchmarkKey) {
        List<String> parts = new ArrayList<>();
        if (tenantKeys > 0) {
            parts.add(Plural.count(tenantKeys, "key") + " " + pattern());
        }
        if (benchmarkKey) {
            parts.add(RemoteBandwidth.BENCHMARK_KEY);
        }
        String where = RemoteBandwidth.where(store);
        return parts.isEmpty() ? "no key of it was left on " + where : "removed " + String.join(" and ", parts) + " from " + where;
    }

    private String pattern() {
        return "kvt:v1:" + tenant + ":*";
    }
}
