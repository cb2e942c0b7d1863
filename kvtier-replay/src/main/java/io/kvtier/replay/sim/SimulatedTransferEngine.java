package io.kvtier.replay.sim;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.LoadJob;
import io.kvtier.offload.transfer.RemoteCopier;
import io.kvtier.offload.transfer.RemoteJob;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferJob;
import io.kvtier.offload.transfer.TransferResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * A transfer engine that copies nothing: each job completes at a simulated time from the
 * {@link CostModel}, on the {@link VirtualClock}. Stores (device to host) and loads (host to
 * device) are two independent FIFO lanes, as PCIe is full duplex: a job starts when its lane is
 * free ({@code max(now, end of the lane's previous job)}) and takes
 * {@code hostLatency + bytes / hostBandwidth}, where {@code bytes} = copied blocks x block tokens x
 * the simulated model's KV bytes per token (of one KV group's layers with {@link #sharingLanes}). A job that would end after its deadline fails at the
 * deadline (the lane stays busy until the copy would have ended).
 *
 * <p>With a {@link SimulatedRemoteStore}, {@link RemoteJob}s run on a third FIFO lane costing
 * the store's {@code latency + bytes / bandwidth} (a probe moves no bytes): a probe or a read
 * succeeds for the leading chunks the store holds when it starts and fails at the first absent
 * one with a {@code miss} error, as the real remote copier; a write's keys become visible when it
 * completes. Without a store a remote job is refused.
 *
 * <p>{@link #poll()} returns the jobs whose completion time has passed; {@link #awaitAny} and
 * {@link #await} advance the clock to the completion they wait for (never beyond the timeout).
 * Engine thread only, like the engine it serves.
 */
public final class SimulatedTransferEngine implements TransferEngine {

    private static final int STORE = 0;
    private static final int LOAD = 1;
    private static final int DISK = 2;
    private static final int REMOTE = 3;

    /**
     * A job in flight; for a remote write the keys it makes visible, for a failed remote probe or
     * read the chunk it fails at ({@code -1}: none).
     */
    private record Pending(long jobId, int lane, long startNanos, long endNanos, long bytes, boolean missesDeadline,
                           List<BlockKey> writes, int missAt) {
    }

    private final CostModel cost;
    private final VirtualClock clock;
    private final int blockTokens;
    private final PriorityQueue<Pending> queue = new PriorityQueue<>(
            Comparator.comparingLong(Pending::endNanos).thenComparingLong(Pending::jobId));
    private final Map<Long, Pending> byId = new HashMap<>();
    // The lanes' state; shared with the engines made by sharingLanes (one PCIe link for every KV group).
    private final long[] laneEnd;
    private final long[] jobs;
    private final long[] bytes;
    private final long[] busyNanos;
    private final LaneTimes[] laneTimes;
    private final long kvBytesPerToken;
    private final SimulatedRemoteStore remote;
    private boolean closed;

    /** @param blockTokens token positions per device block (the engine's block size) */
    public SimulatedTransferEngine(CostModel cost, VirtualClock clock, int blockTokens) {
        this(cost, clock, blockTokens, null);
    }

    /** With a remote store (null: remote jobs are refused). */
    public SimulatedTransferEngine(CostModel cost, VirtualClock clock, int blockTokens, SimulatedRemoteStore remote) {
        if (blockTokens < 1) {
            throw new IllegalArgumentException("block tokens must be at least 1, got " + blockTokens);
        }
        this.cost = cost;
        this.clock = clock;
        this.blockTokens = blockTokens;
        this.remote = remote;
        this.kvBytesPerToken = cost.kvBytesPerToken();
        this.laneEnd = new long[4];
        this.jobs = new long[4];
        this.bytes = new long[4];
        this.busyNanos = new long[4];
        this.laneTimes = new LaneTimes[] {new LaneTimes(), new LaneTimes(), new LaneTimes(), new LaneTimes()};
    }

    private SimulatedTransferEngine(SimulatedTransferEngine lanes, long kvBytesPerToken) {
        this.cost = lanes.cost;
        this.clock = lanes.clock;
        this.blockTokens = lanes.blockTokens;
        this.remote = null;
        this.kvBytesPerToken = kvBytesPerToken;
        this.laneEnd = lanes.laneEnd;
        this.jobs = lanes.jobs;
        this.bytes = lanes.bytes;
        this.busyNanos = lanes.busyNanos;
        this.laneTimes = lanes.laneTimes;
    }

    /**
     * A transfer engine for another KV group's blocks of {@code kvBytesPerToken} bytes per token,
     * on the same lanes as this one: its jobs queue behind this engine's and the other sharers' in
     * each direction, as every group's copies share one PCIe link. Each engine polls and awaits
     * only its own jobs (each group's scheduler numbers its jobs on its own); the lane counters
     * ({@link #storeBytes()}, {@link #loadBusyNanos()}, ...) are the lanes' totals. No remote tier.
     */
    public SimulatedTransferEngine sharingLanes(long kvBytesPerToken) {
        if (kvBytesPerToken < 1) {
            throw new IllegalArgumentException("KV bytes per token must be >= 1, got " + kvBytesPerToken);
        }
        return new SimulatedTransferEngine(this, kvBytesPerToken);
    }

    @Override
    public void submit(TransferJob job) {
        if (closed) {
            throw new IllegalStateException("transfer engine closed; job " + job.jobId() + " refused");
        }
        if (byId.containsKey(job.jobId())) {
            throw new IllegalArgumentException("job " + job.jobId() + " is already in flight");
        }
        int lane = switch (job) {
            case StoreJob s -> STORE;
            case LoadJob l -> LOAD;
            case io.kvtier.offload.transfer.DiskJob d -> DISK;
            case RemoteJob r -> {
                if (remote == null) {
                    throw new IllegalArgumentException("job " + job.jobId() + ": the replay has no remote tier");
                }
                yield REMOTE;
            }
        };
        long blocks = 0;
        for (ChunkCopy c : job.chunks()) {
            // Disk and remote jobs touch no device block: their size is the whole chunk.
            blocks += lane >= DISK ? c.blockCount() : c.copiedBlockCount();
        }
        List<BlockKey> writes = List.of();
        int missAt = -1;
        if (job instanceof RemoteJob r) {
            List<BlockKey> keys = new ArrayList<>(r.chunks().size());
            for (ChunkCopy c : r.chunks()) {
                keys.add(c.key());
            }
            if (r.kind() == RemoteJob.Kind.WRITE) {
                writes = keys;
            } else {
                int present = remote.leadingPresent(keys);
                missAt = present < keys.size() ? present : -1;
                // A probe moves no value; a read moves the values up to the first absent one.
                blocks = r.kind() == RemoteJob.Kind.PROBE ? 0 : (long) (missAt < 0 ? keys.size() : missAt) * blocks / keys.size();
            }
        }
        long size = Math.multiplyExact(Math.multiplyExact(blocks, (long) blockTokens), kvBytesPerToken);
        long start = Math.max(clock.nanoTime(), laneEnd[lane]);
        long end = VirtualClock.after(start, switch (lane) {
            case DISK -> cost.diskTransferNanos(size);
            case REMOTE -> remote.jobNanos(size);
            default -> cost.hostTransferNanos(size);
        });
        laneEnd[lane] = end;
        jobs[lane]++;
        bytes[lane] += size;
        busyNanos[lane] += end - start;
        laneTimes[lane].add(start, end);
        boolean late = end > job.deadlineNanos();
        Pending p = new Pending(job.jobId(), lane, start, late ? Math.max(clock.nanoTime(), job.deadlineNanos()) : end,
                size, late, writes, missAt);
        queue.add(p);
        byId.put(p.jobId(), p);
    }

    @Override
    public List<TransferResult> poll() {
        List<TransferResult> out = new ArrayList<>();
        while (!queue.isEmpty() && queue.peek().endNanos() <= clock.nanoTime()) {
            Pending p = queue.poll();
            byId.remove(p.jobId());
            out.add(result(p));
        }
        return out;
    }

    @Override
    public List<TransferResult> await(Collection<Long> jobIds, Duration timeout) {
        long last = Long.MIN_VALUE;
        for (long id : jobIds) {
            Pending p = byId.get(id);
            if (p != null) {
                last = Math.max(last, p.endNanos());
            }
        }
        return advanceAndCollect(jobIds, last, timeout);
    }

    @Override
    public List<TransferResult> awaitAny(Collection<Long> jobIds, Duration timeout) {
        long first = Long.MAX_VALUE;
        boolean any = false;
        for (long id : jobIds) {
            Pending p = byId.get(id);
            if (p != null) {
                first = Math.min(first, p.endNanos());
                any = true;
            }
        }
        return advanceAndCollect(jobIds, any ? first : Long.MIN_VALUE, timeout);
    }

    /** Moves the clock to {@code target} (bounded by the timeout), then returns the listed jobs done by then. */
    private List<TransferResult> advanceAndCollect(Collection<Long> jobIds, long target, Duration timeout) {
        if (target != Long.MIN_VALUE) {
            long limit = clock.nanoTime() + Math.max(0, timeout.toNanos());
            clock.advanceTo(Math.min(target, limit));
        }
        Set<Long> wanted = new HashSet<>(jobIds);
        List<Pending> done = new ArrayList<>();
        for (Pending p : queue) {
            if (p.endNanos() <= clock.nanoTime() && wanted.contains(p.jobId())) {
                done.add(p);
            }
        }
        done.sort(queue.comparator());
        List<TransferResult> out = new ArrayList<>(done.size());
        for (Pending p : done) {
            queue.remove(p);
            byId.remove(p.jobId());
            out.add(result(p));
        }
        return out;
    }

    private TransferResult result(Pending p) {
        if (p.missesDeadline()) {
            return TransferResult.failed(p.jobId(), 0, p.endNanos() - p.startNanos(), 0, TransferResult.DEADLINE_EXCEEDED);
        }
        if (p.missAt() >= 0) {
            return TransferResult.failed(p.jobId(), p.bytes(), p.endNanos() - p.startNanos(), p.missAt(),
                    RemoteCopier.MISS + ": chunk " + p.missAt() + " of the job is not in the store");
        }
        if (!p.writes().isEmpty()) {
            remote.written(p.writes());
        }
        return TransferResult.ok(p.jobId(), p.bytes(), p.endNanos() - p.startNanos());
    }

    /** Simulated time at which the next job completes, or {@link Long#MAX_VALUE} if none is in flight. */
    public long nextCompletionNanos() {
        return queue.isEmpty() ? Long.MAX_VALUE : queue.peek().endNanos();
    }

    @Override
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public int inFlight() {
        return byId.size();
    }

    /** Store jobs (device to host) submitted. */
    public long storeJobs() {
        return jobs[STORE];
    }

    /** Load jobs (host to device) submitted. */
    public long loadJobs() {
        return jobs[LOAD];
    }

    /** Simulated bytes of the store jobs submitted (the simulated model's KV bytes). */
    public long storeBytes() {
        return bytes[STORE];
    }

    /** Simulated bytes of the load jobs submitted. */
    public long loadBytes() {
        return bytes[LOAD];
    }

    /** Simulated time the store lane was busy, ns. */
    public long storeBusyNanos() {
        return busyNanos[STORE];
    }

    /**
     * Simulated time the store lane was busy up to {@code t}, ns: a job that misses its deadline keeps
     * the lane busy until its copy would have ended, possibly long after the run's last request, so
     * the fraction of a makespan the lane was busy counts only the part inside it (a 1 MB/s link
     * showed the store lane busy 124,753% of the makespan).
     */
    public long storeBusyNanosUntil(long t) {
        return laneTimes[STORE].busyUntil(t);
    }

    /** {@link #storeBusyNanosUntil} of the load lane. */
    public long loadBusyNanosUntil(long t) {
        return laneTimes[LOAD].busyUntil(t);
    }

    /** Remote jobs (probes, reads, writes) submitted. */
    public long remoteJobs() {
        return jobs[REMOTE];
    }

    /** Simulated time the remote lane was busy, ns. */
    public long remoteBusyNanos() {
        return busyNanos[REMOTE];
    }

    /** Simulated time the load lane was busy, ns. */
    public long loadBusyNanos() {
        return busyNanos[LOAD];
    }

    /** One lane's busy intervals, in order: a lane runs its jobs one after another, so they never overlap. */
    private static final class LaneTimes {
        private long[] starts = new long[64];
        private long[] ends = new long[64];
        private int n;

        void add(long start, long end) {
            if (n == starts.length) {
                starts = java.util.Arrays.copyOf(starts, 2 * n);
                ends = java.util.Arrays.copyOf(ends, 2 * n);
            }
            starts[n] = start;
            ends[n++] = end;
        }

        /** Busy time before {@code t}: every interval, less what the last ones run past it. */
        long busyUntil(long t) {
            long busy = 0;
            for (int i = 0; i < n; i++) {
                busy += Math.max(0, Math.min(ends[i], t) - starts[i]);
            }
            return busy;
        }
    }

    @Override
    public void close() {
        closed = true;
        queue.clear();
        byId.clear();
    }
}
