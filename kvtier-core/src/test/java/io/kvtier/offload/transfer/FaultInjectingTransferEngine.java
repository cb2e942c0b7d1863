package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A test fake: a {@link TransferEngine} that copies for real (through a {@link ChunkCopier})
 * but on the calling thread, inside {@link #poll} and {@link #await}, so that tests decide
 * exactly when each job completes. Faults: hold a job until {@link #release}d, delay it by a
 * number of polls, fail it as a whole or at the chunk with a given key, let later jobs overtake
 * earlier ones, and damage a slot's bytes.
 *
 * <p>Order: a poll first runs every runnable job, then fails every job still pending past its
 * deadline (so a deadline hits only jobs that were held, delayed or blocked). Without
 * {@link #reorder}, jobs of one direction complete in submission order, so a held or delayed job
 * also holds back the later jobs of its direction, as a slow job would in a FIFO engine. An
 * expired job is gone: releasing it later copies nothing (a late completion is ignored).
 * {@link #await} ignores delays (waiting is what makes them pass) and, while held jobs remain,
 * waits on the clock for the next deadline; with a {@link TransferClock.Manual} clock that wait
 * just advances the clock.
 *
 * <p>Single-threaded, like the engine thread that drives it. Deterministic for a given sequence
 * of calls and a manual clock.
 */
public final class FaultInjectingTransferEngine implements TransferEngine {

    /** Error text of a job or chunk failed by injection. */
    public static final String INJECTED = "injected failure";

    private static final class Pending {
        final TransferJob job;
        final long submitted;
        boolean held;
        int delayPolls;
        boolean fail;

        Pending(TransferJob job, long submitted) {
            this.job = job;
            this.submitted = submitted;
        }
    }

    private record Rule(Predicate<TransferJob> which, boolean hold, boolean fail, int delayPolls) {
    }

    private final ChunkCopier copier;
    private final TransferClock clock;
    private final Map<Long, Pending> pending = new LinkedHashMap<>();
    private final Undelivered undelivered = new Undelivered();
    private final List<Rule> rules = new ArrayList<>();
    private final Set<BlockKey> failingChunks = new HashSet<>();
    private final List<TransferJob> submitted = new ArrayList<>();
    private boolean reorder;
    private boolean closed;

    /** A fake on the system clock. */
    public FaultInjectingTransferEngine(ChunkCopier copier) {
        this(copier, TransferClock.system());
    }

    /** A fake on the given clock (use {@link TransferClock.Manual} for fully deterministic tests). */
    public FaultInjectingTransferEngine(ChunkCopier copier, TransferClock clock) {
        this.copier = Objects.requireNonNull(copier, "copier");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    // ---- faults -------------------------------------------------------------------------------

    /** Jobs submitted from now on that match are held until {@link #release}d (or their deadline). */
    public void holdJobs(Predicate<TransferJob> which) {
        rules.add(new Rule(which, true, false, 0));
    }

    /** Holds every store job submitted from now on. */
    public void holdStores() {
        holdJobs(j -> j instanceof StoreJob);
    }

    /** Holds every load job submitted from now on. */
    public void holdLoads() {
        holdJobs(j -> j instanceof LoadJob);
    }

    /** Holds a job already submitted; false if it is not pending. */
    public boolean hold(long jobId) {
        Pending p = pending.get(jobId);
        if (p != null) {
            p.held = true;
        }
        return p != null;
    }

    /** Lets a held job complete at the next poll; false if it is not pending (e.g. already expired). */
    public boolean release(long jobId) {
        Pending p = pending.get(jobId);
        if (p == null || !p.held) {
            return false;
        }
        p.held = false;
        return true;
    }

    /** Releases every held job. */
    public void releaseAll() {
        pending.values().forEach(p -> p.held = false);
    }

    /** Jobs submitted from now on that match fail as a whole, copying nothing (chunk index 0). */
    public void failJobs(Predicate<TransferJob> which) {
        rules.add(new Rule(which, false, true, 0));
    }

    /** Makes a pending job fail as a whole when it runs; false if it is not pending. */
    public boolean failJob(long jobId) {
        Pending p = pending.get(jobId);
        if (p != null) {
            p.fail = true;
        }
        return p != null;
    }

    /**
     * Every chunk with this key fails when a job reaches it, until {@link #clearFaults}: the
     * chunks before it are copied, nothing from it onward, and the result names its index.
     */
    public void failChunk(BlockKey key) {
        failingChunks.add(Objects.requireNonNull(key, "key"));
    }

    /** Jobs submitted from now on that match are skipped by the next {@code polls} polls. */
    public void delayJobs(Predicate<TransferJob> which, int polls) {
        if (polls < 0) {
            throw new IllegalArgumentException("delay must not be negative: " + polls);
        }
        rules.add(new Rule(which, false, false, polls));
    }

    /**
     * With {@code true}, later jobs may complete before earlier held or delayed ones of the same
     * direction, and the jobs completing in one poll complete in reverse submission order.
     */
    public void reorder(boolean on) {
        reorder = on;
    }

    /** Forgets every rule, failing chunk and reordering; held and delayed jobs stay as they are. */
    public void clearFaults() {
        rules.clear();
        failingChunks.clear();
        reorder = false;
    }

    /** Flips all bits of one payload byte of a slot. */
    public void corruptPayloadByte(int slot, long offset) {
        flip(copier.slab().payloadOf(slot), offset);
    }

    /** Flips all bits of one header byte of a slot. */
    public void corruptHeaderByte(int slot, long offset) {
        flip(copier.slab().headerOf(slot), offset);
    }

    /** Zeroes a slot from {@code keepBytes} (slot-relative: header area first, then payload) to its end. */
    public void truncate(int slot, long keepBytes) {
        MemorySegment s = copier.slab().slot(slot);
        s.asSlice(Math.min(keepBytes, s.byteSize())).fill((byte) 0);
    }

    private static void flip(MemorySegment s, long offset) {
        s.set(ValueLayout.JAVA_BYTE, offset, (byte) ~s.get(ValueLayout.JAVA_BYTE, offset));
    }

    /** The host slots the fake copies to and from. */
    public HostSlab slab() {
        return copier.slab();
    }

    // ---- inspection ---------------------------------------------------------------------------

    /** Every job submitted so far, in order. */
    public List<TransferJob> submitted() {
        return Collections.unmodifiableList(submitted);
    }

    /** Ids of jobs submitted and not yet completed, in submission order. */
    public List<Long> pendingIds() {
        return List.copyOf(pending.keySet());
    }

    /** Ids of pending jobs that are held. */
    public List<Long> heldIds() {
        return pending.values().stream().filter(p -> p.held).map(p -> p.job.jobId()).toList();
    }

    // ---- TransferEngine -----------------------------------------------------------------------

    @Override
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public void submit(TransferJob job) {
        if (closed) {
            throw new IllegalStateException("transfer engine is closed; job " + job.jobId() + " not accepted");
        }
        if (pending.containsKey(job.jobId())) {
            throw new IllegalArgumentException("job " + job.jobId() + " is already in flight");
        }
        if (job instanceof DiskJob || job instanceof RemoteJob) {
            throw new IllegalArgumentException("job " + job.jobId() + ": this fake has no disk or remote tier; "
                    + "disk and remote faults are injected into the real files with AsyncTransferEngine");
        }
        copier.validate(job);
        Pending p = new Pending(job, clock.nanoTime());
        for (Rule r : rules) {
            if (r.which.test(job)) {
                p.held |= r.hold;
                p.fail |= r.fail;
                p.delayPolls = Math.max(p.delayPolls, r.delayPolls);
            }
        }
        pending.put(job.jobId(), p);
        submitted.add(job);
    }

    @Override
    public List<TransferResult> poll() {
        runRunnable(false);
        for (Pending p : pending.values()) {
            if (p.delayPolls > 0) {
                p.delayPolls--;
            }
        }
        expire();
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
        long end = clock.nanoTime() + Math.max(0, timeout.toNanos());
        try {
            while (true) {
                runRunnable(true);
                expire();
                boolean done = wanted.stream().noneMatch(pending::containsKey)
                        || (any && undelivered.containsAny(wanted));
                if (done || clock.nanoTime() - end >= 0) {
                    break;
                }
                long wake = end;
                for (Pending p : pending.values()) {
                    if (p.job.deadlineNanos() - wake < 0) {
                        wake = p.job.deadlineNanos();
                    }
                }
                clock.sleepUntil(wake);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return undelivered.take(wanted);
    }

    @Override
    public int inFlight() {
        return pending.size() + undelivered.size();
    }

    @Override
    public void close() {
        closed = true;
        pending.clear();
        undelivered.clear();
    }

    private void runRunnable(boolean ignoreDelays) {
        List<Pending> run = new ArrayList<>();
        boolean storesBlocked = false;
        boolean loadsBlocked = false;
        for (Pending p : pending.values()) {
            boolean store = p.job instanceof StoreJob;
            if (!reorder && (store ? storesBlocked : loadsBlocked)) {
                continue;
            }
            if (p.held || (!ignoreDelays && p.delayPolls > 0)) {
                if (store) {
                    storesBlocked = true;
                } else {
                    loadsBlocked = true;
                }
                continue;
            }
            run.add(p);
        }
        if (reorder) {
            Collections.reverse(run);
        }
        for (Pending p : run) {
            pending.remove(p.job.jobId());
            undelivered.add(execute(p));
        }
    }

    private TransferResult execute(Pending p) {
        TransferJob job = p.job;
        long start = System.nanoTime();
        if (p.fail) {
            return TransferResult.failed(job.jobId(), 0, System.nanoTime() - start, 0, INJECTED);
        }
        long bytes = 0;
        for (int i = 0; i < job.chunks().size(); i++) {
            ChunkCopy c = job.chunks().get(i);
            if (failingChunks.contains(c.key())) {
                return TransferResult.failed(job.jobId(), bytes, System.nanoTime() - start, i,
                        INJECTED + " of chunk #" + i + " (" + c.key().shortHex() + ")");
            }
            try {
                if (job instanceof StoreJob) {
                    bytes += copier.store(c);
                } else if (copier.load(c) instanceof ChunkHeader.Verification.Corrupt bad) {
                    return TransferResult.failed(job.jobId(), bytes, System.nanoTime() - start, i,
                            "chunk #" + i + " (" + c.key().shortHex() + ") failed verification: " + bad.reason());
                } else {
                    bytes += copier.loadedBytes(c);
                }
            } catch (RuntimeException e) { // e.g. a closed slab: reported like the real engine does
                return TransferResult.failed(job.jobId(), bytes, System.nanoTime() - start, i,
                        "chunk #" + i + " (" + c.key().shortHex() + "): " + e);
            }
        }
        return TransferResult.ok(job.jobId(), bytes, System.nanoTime() - start);
    }

    private void expire() {
        long now = clock.nanoTime();
        for (Iterator<Pending> it = pending.values().iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (now - p.job.deadlineNanos() >= 0) {
                it.remove();
                undelivered.add(TransferResult.failed(p.job.jobId(), 0, now - p.submitted, 0,
                        TransferResult.DEADLINE_EXCEEDED));
            }
        }
    }

    @Override
    public String toString() {
        return "FaultInjectingTransferEngine[pending=" + pending.size() + " held=" + heldIds().size() + "]";
    }
}
