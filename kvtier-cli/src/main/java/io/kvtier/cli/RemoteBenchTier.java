package io.kvtier.cli;

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
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The tier's side of {@link RemoteBandwidth}'s table ({@code bench offload --remote-url}): one store
 * (one connection), one host slab and one transfer engine for a size; every round writes and
 * reads the same keys, at most {@link RemoteBandwidth#TIER_KEYS} (overwritten in turn, as
 * redis-benchmark's SET overwrites its key), deleted at the end.
 */
final class RemoteBenchTier implements AutoCloseable {

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

    private static final int TOKENS = 16;
    private final RemoteBenchRun run;
    private final long payload;
    private final BlockKey ns = new BlockKey(1, 2, 3, new Random().nextLong());
    private final HostSlab slab;
    final LettuceRemoteStore store;
    private final RemoteKeys keys;
    private final RemoteCopier copier;
    /** One device block: the engine's copier needs one; remote writes touch none. */
    private final Arena device = Arena.ofShared();
    private final AsyncTransferEngine engine;
    /** CRC32C of every write slot's payload (the same bytes in each). */
    private final int crc;
    private long nextJob = 1;
    private int written;

    RemoteBenchTier(RemoteBenchRun run, long payload) {
        this.run = run;
        this.payload = payload;
        run.enter();
        try {
            this.store = RemoteBandwidth.open(run.store().withTenant(run.tenant()).withTimeout(java.time.Duration.ofSeconds(10)), run);
        } catch (RuntimeException e) {
            device.close();
            run.exit();
            throw e;
        }
        this.slab = new HostSlab((WRITE_JOBS_IN_FLIGHT + 1) * RemoteBandwidth.PIPELINE, payload, TOKENS); // then the reads' slots
        this.keys = new RemoteKeys(run.tenant(), ns);
        this.copier = new RemoteCopier(slab, store, keys, payload);
        this.engine = new AsyncTransferEngine(new ChunkCopier(device.allocate(payload), payload, slab), null, copier);
        byte[] bytes = new byte[(int) payload];
        new Random(1).nextBytes(bytes);
        for (int i = 0; i < WRITE_JOBS_IN_FLIGHT * RemoteBandwidth.PIPELINE; i++) {
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, slab.payloadOf(i, payload), 0, payload);
        }
        this.crc = ChunkHeader.crc32c(slab.payloadOf(0, payload));
    }

    /**
     * MB/s of payload stored, then loaded, through the remote copier, and the values of each:
     * as redis-benchmark's {@code -t set,get} does, every store first, then the loads, each
     * side at least {@code chunks} values and more until its jobs took
     * {@link RemoteBandwidth#MIN_BENCHMARK_SECONDS} (a short run is timed slower: 32 jobs of 256 KiB stored
     * 1,160-1,490 MB/s where 256 jobs stored 1,950-2,180, in RemoteWriteComparison). The
     * stores are write jobs through the transfer engine, {@link #WRITE_JOBS_IN_FLIGHT} submitted
     * at once, timed from the first submission to the last result; the loads, read jobs one
     * after another on this thread, read the keys the stores wrote last, in turn.
     */
    double[] run(int chunks) {
        int stored = 0;
        int[] lastWrite = new int[RemoteBandwidth.TIER_KEYS]; // the value each key holds: its tokens are that index
        java.util.ArrayDeque<Long> inFlight = new java.util.ArrayDeque<>();
        long start = System.nanoTime();
        long least = (long) (RemoteBandwidth.MIN_BENCHMARK_SECONDS * 1e9);
        for (int job = 0; stored < chunks || System.nanoTime() - start < least; job++, stored += RemoteBandwidth.PIPELINE) {
            run.checkRunning();
            if (inFlight.size() == WRITE_JOBS_IN_FLIGHT) {
                awaitWrite(inFlight.poll()); // its slots are free again
            }
            written = Math.max(written, Math.min(stored + RemoteBandwidth.PIPELINE, RemoteBandwidth.TIER_KEYS)); // before the job: it may fail half done
            List<ChunkCopy> writes = new ArrayList<>();
            for (int i = 0; i < RemoteBandwidth.PIPELINE; i++) {
                int k = (stored + i) % RemoteBandwidth.TIER_KEYS;
                int slot = job % WRITE_JOBS_IN_FLIGHT * RemoteBandwidth.PIPELINE + i;
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
        int keys = Math.min(stored, RemoteBandwidth.TIER_KEYS);
        long loadNanos = 0;
        int loaded = 0;
        for (; loaded < chunks || loadNanos < least; loaded += RemoteBandwidth.PIPELINE) {
            run.checkRunning();
            List<ChunkCopy> reads = new ArrayList<>();
            for (int i = 0; i < RemoteBandwidth.PIPELINE; i++) {
                int k = (loaded + i) % keys;
                reads.add(new ChunkCopy(new int[] {-1}, WRITE_JOBS_IN_FLIGHT * RemoteBandwidth.PIPELINE + i, ns, key(k), ns,
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