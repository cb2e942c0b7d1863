package io.kvtier.offload.transfer;

import io.kvtier.tier.ChunkHeader;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ObjIntConsumer;

/**
 * The real transfer engine: one platform thread per direction (stores, loads), each running its
 * jobs in submission order, copying through a {@link ChunkCopier}. Jobs go in through one
 * queue per direction, results come back through one queue; all other state belongs to the
 * engine thread.
 *
 * <p>Deadlines. The only state the two sides share besides the queues is one atomic word per
 * job, the claim that makes a deadline safe: a worker claims the job before it touches the
 * memory of each chunk; the engine thread, at a job's deadline, marks the job expired unless
 * the worker holds the claim, in which case it waits for the chunk in progress to end (one
 * memory copy). So once a job is reported failed at its deadline, no thread reads or writes its
 * blocks or slots any more, and the scheduler may reuse them at once; the worker drops the job.
 */
public final class AsyncTransferEngine implements TransferEngine {

    private static final System.Logger LOG = System.getLogger(AsyncTransferEngine.class.getName());

    private static final int IDLE = 0;    // queued, or between two chunks
    private static final int BUSY = 1;    // a worker is copying a chunk
    private static final int DONE = 2;    // the worker finished; its result is (being) queued
    private static final int EXPIRED = 3; // the engine thread gave up on it; the worker must not touch it

    /** A job on its way through a worker, with its claim word. */
    private static final class Ticket {
        final TransferJob job;
        final long submittedNanos;
        final AtomicInteger state = new AtomicInteger(IDLE);

        Ticket(TransferJob job, long submittedNanos) {
            this.job = job;
            this.submittedNanos = submittedNanos;
        }

        /** Engine thread: true if the job is now expired (the worker will not touch it again). */
        boolean expire() {
            while (true) {
                int s = state.get();
                if (s == DONE) {
                    return false;
                }
                if (s == EXPIRED || (s == IDLE && state.compareAndSet(IDLE, EXPIRED))) {
                    return true;
                }
                Thread.onSpinWait(); // BUSY: one chunk copy in progress
            }
        }
    }

    private static final Ticket STOP = new Ticket(new StoreJob(-1, List.of(), 0), 0);

    private final ChunkCopier copier;
    private final DiskCopier disk;
    private final RemoteCopier remote;
    private final ObjIntConsumer<TransferJob> beforeChunk;
    private final BlockingQueue<Ticket> stores = new LinkedBlockingQueue<>();
    private final BlockingQueue<Ticket> loads = new LinkedBlockingQueue<>();
    private final BlockingQueue<Ticket> diskJobs = new LinkedBlockingQueue<>();
    private final BlockingQueue<Ticket> remoteReads = new LinkedBlockingQueue<>();
    private final BlockingQueue<Ticket> remoteWrites = new LinkedBlockingQueue<>();
    /** Store jobs queued or running on the store thread (an inline store must not overtake one). */
    private final java.util.concurrent.atomic.AtomicInteger storesQueued = new java.util.concurrent.atomic.AtomicInteger();
    /** No pending job's deadline comes before this (a lower bound; engine thread only). */
    private long nextDeadline;

    /**
     * A store job of at most this many payload bytes, submitted while no other store is queued,
     * runs at once on the engine thread: copying a few KiB costs less than waking the store thread,
     * which on a small machine would preempt a compute thread mid-step. Its result still arrives
     * through {@link #poll()}, like any other. 1 MiB: a step's job for 32 sequences of 20 KiB
     * blocks (640 KiB) cost the process 9.8 us of CPU a step inline against 6.7 on the engine
     * thread plus 7.9 on the store thread (OffloadStepCpuComparison, 2 cores, load 23-28).
     */
    static final long INLINE_STORE_BYTES = Long.getLong("kvtier.transfer.inlineStoreBytes", 1 << 20);

    private final long inlineStoreBytes;
    private final BlockingQueue<TransferResult> results = new LinkedBlockingQueue<>();
    private final Thread storeThread;
    private final Thread loadThread;
    private final Thread diskThread;
    private final Thread remoteReadThread;
    private final List<Thread> remoteWriteThreads = new java.util.ArrayList<>();

    /**
     * Threads running remote write jobs: two, so that a job's SETs go out while the job before it
     * still awaits its answers. With one, every write job ended in a drain of the pipeline (the
     * last value's server time, its reply, two thread wake-ups: about 0.8 ms a job, the store side
     * of {@code bench offload --remote-url} at 0.30-0.50 of redis-benchmark's SET at 256 KiB).
     * Sends stay in submission order ({@link #remoteSendTurn}); answers are taken by each job's
     * own thread, so a job's result is its own answers' as before. {@code -Dkvtier.remote.writeWorkers=1}
     * for comparisons.
     */
    public static final int REMOTE_WRITE_WORKERS = Math.max(1, Integer.getInteger("kvtier.remote.writeWorkers", 2));

    /**
     * Held by a remote write worker from taking a job off the queue until every SET of it is sent:
     * jobs send in submission order (parents before children across jobs too), one at a time.
     */
    private final java.util.concurrent.locks.ReentrantLock remoteSendTurn = new java.util.concurrent.locks.ReentrantLock();

    // Engine thread only.
    private final Map<Long, Ticket> pending = new LinkedHashMap<>();
    private final Undelivered undelivered = new Undelivered();
    private boolean closed;

    /** An engine copying between the device slab and the host slots of {@code copier}. */
    public AsyncTransferEngine(ChunkCopier copier) {
        this(copier, null, (job, chunk) -> {
        });
    }

    /**
     * An engine that also moves chunks between the host slots and the disk tier ({@link DiskJob}s,
     * on a third thread, FIFO); {@code disk} null means no disk tier.
     */
    public AsyncTransferEngine(ChunkCopier copier, DiskCopier disk) {
        this(copier, disk, (job, chunk) -> {
        });
    }

    /**
     * An engine that also moves chunks between the host slots and the remote tier
     * ({@link RemoteJob}s: probes and reads on one thread, FIFO; writes on {@link #REMOTE_WRITE_WORKERS}
     * threads sending in submission order, one job's SETs going out while the job before awaits its
     * answers; each job's commands pipelined); {@code disk} or {@code remote} null means no such tier.
     */
    public AsyncTransferEngine(ChunkCopier copier, DiskCopier disk, RemoteCopier remote) {
        this(copier, disk, remote, (job, chunk) -> {
        }, INLINE_STORE_BYTES, REMOTE_WRITE_WORKERS);
    }

    /** For comparisons: remote write jobs on {@code remoteWriteWorkers} threads ({@link #REMOTE_WRITE_WORKERS}). */
    AsyncTransferEngine(ChunkCopier copier, RemoteCopier remote, int remoteWriteWorkers) {
        this(copier, null, remote, (job, chunk) -> {
        }, INLINE_STORE_BYTES, remoteWriteWorkers);
    }

    /**
     * For tests: {@code beforeChunk(job, i)} runs on the worker thread before it claims chunk
     * {@code i} of a job, i.e. before it touches that chunk's memory (a test can block there to
     * make a job late at any chunk).
     */
    AsyncTransferEngine(ChunkCopier copier, ObjIntConsumer<TransferJob> beforeChunk) {
        this(copier, null, null, beforeChunk, 0, 0); // tests that hook the worker keep every store on it
    }

    private AsyncTransferEngine(ChunkCopier copier, DiskCopier disk, ObjIntConsumer<TransferJob> beforeChunk) {
        this(copier, disk, null, beforeChunk, INLINE_STORE_BYTES, 0);
    }

    private AsyncTransferEngine(ChunkCopier copier, DiskCopier disk, RemoteCopier remote,
                                ObjIntConsumer<TransferJob> beforeChunk, long inlineStoreBytes, int remoteWriteWorkers) {
        this.inlineStoreBytes = inlineStoreBytes;
        this.copier = Objects.requireNonNull(copier, "copier");
        this.disk = disk;
        this.remote = remote;
        this.beforeChunk = beforeChunk;
        this.storeThread = Thread.ofPlatform().name("kvtier-transfer-store").daemon().start(() -> work(stores));
        this.loadThread = Thread.ofPlatform().name("kvtier-transfer-load").daemon().start(() -> work(loads));
        this.diskThread = disk == null ? null
                : Thread.ofPlatform().name("kvtier-transfer-disk").daemon().start(() -> work(diskJobs));
        this.remoteReadThread = remote == null ? null
                : Thread.ofPlatform().name("kvtier-transfer-remote-read").daemon().start(() -> work(remoteReads));
        for (int i = 0; remote != null && i < Math.max(1, remoteWriteWorkers); i++) {
            remoteWriteThreads.add(Thread.ofPlatform().name("kvtier-transfer-remote-write-" + i).daemon().start(this::workRemoteWrites));
        }
    }

    /** With a remote tier: its reads go straight through to the device ({@link RemoteCopier}). */
    @Override
    public boolean loadsFromRemote() {
        return remote != null;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void submit(TransferJob job) {
        if (closed) {
            throw new IllegalStateException("transfer engine is closed; job " + job.jobId() + " not accepted");
        }
        if (pending.containsKey(job.jobId())) {
            throw new IllegalArgumentException("job " + job.jobId() + " is already in flight");
        }
        if (job instanceof DiskJob && disk == null) {
            throw new IllegalArgumentException("job " + job.jobId() + " is a disk job but this engine has no disk tier");
        }
        if (job instanceof RemoteJob && remote == null) {
            throw new IllegalArgumentException("job " + job.jobId() + " is a remote job but this engine has no remote tier");
        }
        copier.validate(job);
        Ticket t = new Ticket(job, nanoTime());
        if (pending.isEmpty() || job.deadlineNanos() - nextDeadline < 0) {
            nextDeadline = job.deadlineNanos();
        }
        pending.put(job.jobId(), t);
        switch (job) {
            case StoreJob s -> {
                if (storesQueued.get() == 0 && payloadBytes(s) <= inlineStoreBytes) {
                    run(t);
                } else {
                    storesQueued.incrementAndGet();
                    stores.add(t);
                }
            }
            case LoadJob l -> loads.add(t);
            case DiskJob d -> diskJobs.add(t);
            case RemoteJob r -> (r.kind() == RemoteJob.Kind.WRITE ? remoteWrites : remoteReads).add(t);
        }
    }

    @Override
    public List<TransferResult> poll() {
        collect();
        return undelivered.drain();
    }

    @Override
    public List<TransferResult> await(Collection<Long> jobIds, Duration timeout) {
        return awaitJobs(jobIds, timeout, false);
    }

    @Override
    public List<TransferResult> awaitAny(Collection<Long> jobIds, Duration timeout) {
        return awaitJobs(jobIds, timeout, true);
    }

    private List<TransferResult> awaitJobs(Collection<Long> jobIds, Duration timeout, boolean any) {
        Set<Long> wanted = new HashSet<>(jobIds);
        long end = nanoTime() + Math.max(0, timeout.toNanos());
        collect();
        try {
            while (anyPending(wanted) && !(any && undelivered.containsAny(wanted))) {
                long now = nanoTime();
                if (now - end >= 0) {
                    break;
                }
                long wake = end;
                for (Ticket t : pending.values()) {
                    if (t.job.deadlineNanos() - wake < 0) {
                        wake = t.job.deadlineNanos();
                    }
                }
                TransferResult r = results.poll(Math.max(0, wake - now), TimeUnit.NANOSECONDS);
                if (r != null) {
                    accept(r);
                }
                collect();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return undelivered.take(wanted);
    }

    private boolean anyPending(Set<Long> ids) {
        for (Long id : ids) {
            if (pending.containsKey(id)) {
                return true;
            }
        }
        return false;
    }

    /** Moves finished results and missed deadlines into {@code undelivered}. */
    private void collect() {
        for (TransferResult r; (r = results.poll()) != null; ) {
            accept(r);
        }
        long now = nanoTime();
        if (pending.isEmpty() || now - nextDeadline < 0) {
            return; // no deadline missed: the common poll walks nothing and allocates nothing
        }
        boolean any = false;
        for (Iterator<Ticket> it = pending.values().iterator(); it.hasNext(); ) {
            Ticket t = it.next();
            if (now - t.job.deadlineNanos() >= 0 && t.expire()) {
                it.remove();
                undelivered.add(TransferResult.failed(t.job.jobId(), 0, now - t.submittedNanos, 0,
                        TransferResult.DEADLINE_EXCEEDED));
            } else if (!any || t.job.deadlineNanos() - nextDeadline < 0) {
                nextDeadline = t.job.deadlineNanos();
                any = true;
            }
        }
    }

    private void accept(TransferResult r) {
        if (pending.remove(r.jobId()) != null) {
            undelivered.add(r);
        } // else: the job was already reported failed at its deadline; drop the late result
    }

    @Override
    public int inFlight() {
        return pending.size() + undelivered.size();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Ticket t : pending.values()) {
            t.expire();
        }
        pending.clear();
        undelivered.clear();
        stores.add(STOP);
        loads.add(STOP);
        diskJobs.add(STOP);
        remoteReads.add(STOP);
        remoteWriteThreads.forEach(th -> remoteWrites.add(STOP)); // one for each
        boolean interrupted = false;
        List<Thread> threads = new java.util.ArrayList<>(List.of(storeThread, loadThread));
        for (Thread th : new Thread[] {diskThread, remoteReadThread}) {
            if (th != null) {
                threads.add(th);
            }
        }
        threads.addAll(remoteWriteThreads);
        for (Thread th : threads) {
            while (th.isAlive()) {
                try {
                    th.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- worker side -------------------------------------------------------------------------

    private void work(BlockingQueue<Ticket> queue) {
        while (true) {
            Ticket t;
            try {
                t = queue.take();
            } catch (InterruptedException e) {
                continue; // only close() stops a worker, through STOP
            }
            if (t == STOP) {
                return;
            }
            try {
                run(t);
            } finally {
                if (t.job instanceof StoreJob) {
                    storesQueued.decrementAndGet();
                }
            }
        }
    }

    /**
     * A remote write worker: takes a job and sends its SETs while it holds {@link #remoteSendTurn},
     * then gives the turn to the other worker and takes its own job's answers.
     */
    private void workRemoteWrites() {
        while (true) {
            remoteSendTurn.lock();
            try {
                Ticket t;
                try {
                    t = remoteWrites.take();
                } catch (InterruptedException e) {
                    continue; // only close() stops a worker, through STOP
                }
                if (t == STOP) {
                    return;
                }
                if (t.state.get() != EXPIRED) {
                    runRemote(t, (RemoteJob) t.job, remoteSendTurn::unlock);
                }
            } finally {
                if (remoteSendTurn.isHeldByCurrentThread()) {
                    remoteSendTurn.unlock(); // the job ended before its answers were awaited, or was expired
                }
            }
        }
    }

    private long payloadBytes(StoreJob job) {
        long n = 0;
        for (ChunkCopy c : job.chunks()) {
            n += copier.payloadBytes(c);
        }
        return n;
    }

    private void run(Ticket t) {
        TransferJob job = t.job;
        if (t.state.get() == EXPIRED) {
            return;
        }
        if (job instanceof RemoteJob r) {
            runRemote(t, r, () -> { });
            return;
        }
        long start = System.nanoTime();
        long bytes = 0;
        List<ChunkCopy> chunks = job.chunks();
        if (chunks.isEmpty()) {
            if (t.state.compareAndSet(IDLE, BUSY)) {
                if (job instanceof DiskJob d) {
                    d.deletions().forEach(disk::delete);
                }
                t.state.set(DONE);
                results.add(TransferResult.ok(job.jobId(), 0, 0));
            }
            return;
        }
        for (int i = 0; i < chunks.size(); i++) {
            beforeChunk.accept(job, i);
            if (System.nanoTime() - job.deadlineNanos() >= 0 || !t.state.compareAndSet(IDLE, BUSY)) {
                return; // late or expired: the engine thread reports it; touch nothing more
            }
            ChunkCopy c = chunks.get(i);
            String error = null;
            try {
                if (job instanceof DiskJob d) {
                    if (i == 0) {
                        d.deletions().forEach(disk::delete);
                    }
                    String failure = d.kind() == DiskJob.Kind.WRITE ? disk.write(c) : disk.read(c);
                    if (failure != null) {
                        error = "chunk #" + i + ": " + failure;
                    } else {
                        bytes += copier.payloadBytes(c);
                    }
                } else if (job instanceof StoreJob) {
                    bytes += copier.store(c);
                } else if (copier.load(c) instanceof ChunkHeader.Verification.Corrupt bad) {
                    error = "chunk #" + i + " (" + c.key().shortHex() + ") failed verification: " + bad.reason();
                } else {
                    bytes += copier.loadedBytes(c);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "transfer job " + job.jobId() + " chunk #" + i + " failed", e);
                error = "chunk #" + i + " (" + c.key().shortHex() + "): " + e;
            }
            long nanos = System.nanoTime() - start;
            if (error != null) {
                t.state.set(DONE);
                results.add(TransferResult.failed(job.jobId(), bytes, nanos, i, error));
                return;
            }
            if (i == chunks.size() - 1) {
                t.state.set(DONE);
                results.add(TransferResult.ok(job.jobId(), bytes, nanos));
                return;
            }
            t.state.set(IDLE);
        }
    }

    /**
     * A remote job claims its job only while it copies to or from a slot, never while it waits for
     * the store; {@code sent} runs once a write's SETs are all sent, before its answers are awaited.
     */
    private void runRemote(Ticket t, RemoteJob job, Runnable sent) {
        TransferResult r = remote.run(job, new RemoteCopier.Claim() {
            @Override
            public boolean enter() {
                return System.nanoTime() - job.deadlineNanos() < 0 && t.state.compareAndSet(IDLE, BUSY);
            }

            @Override
            public void exit() {
                t.state.set(IDLE);
            }

            @Override
            public boolean ended() {
                int s = t.state.get();
                return s == EXPIRED || s == DONE || System.nanoTime() - job.deadlineNanos() >= 0;
            }
        }, copier, sent);
        // A read's values are copied on the store's I/O thread: one of a GET still in flight (the
        // window after a failed chunk) may hold the claim for its copy now; once DONE, none can.
        while (r != null) {
            if (t.state.compareAndSet(IDLE, DONE)) {
                results.add(r);
                return;
            }
            if (t.state.get() == EXPIRED) {
                return; // the engine thread reported it at its deadline
            }
            Thread.onSpinWait();
        }
    }

    @Override
    public String toString() {
        return "AsyncTransferEngine[inFlight=" + pending.size() + "]";
    }
}
