package io.kvtier.engine;

import io.kvtier.offload.transfer.LoadJob;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferClock;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferJob;
import io.kvtier.offload.transfer.TransferResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A test fake: a {@link TransferEngine} on a virtual clock ({@link TransferClock.Manual}), whose
 * load and store jobs take exactly {@code loadTime} of it (one link, as slow both ways). It runs
 * every job on the wrapped engine (the bytes really move), but hands out a load or store job's
 * result only once the virtual clock has reached its submission plus {@code loadTime}, with
 * {@code loadTime} as the job's duration; waiting for a result moves the clock to the earliest
 * such time, so nothing sleeps. Other jobs pass through.
 * Whatever else reads {@link #nanoTime()} (the engine times its forward passes with it) sees the
 * same virtual time, so the load-or-recompute estimates come from injected costs, not from the
 * machine's speed. Engine thread only.
 */
final class DelayingTransferEngine implements TransferEngine {

    private final TransferEngine inner;
    private final TransferClock.Manual clock;
    private final long loadNanos;
    private final Map<Long, Long> loadDue = new HashMap<>();
    private final List<TransferResult> held = new ArrayList<>();

    /**
     * @param clock    the virtual clock; tests advance it for other costs (a forward pass's)
     * @param loadTime virtual duration of every load and store job, positive
     */
    DelayingTransferEngine(TransferEngine inner, TransferClock.Manual clock, Duration loadTime) {
        if (!loadTime.isPositive()) {
            throw new IllegalArgumentException("a load takes some time (an unmeasured load is never fitted): " + loadTime);
        }
        this.inner = inner;
        this.clock = clock;
        this.loadNanos = loadTime.toNanos();
    }

    @Override
    public void submit(TransferJob job) {
        if (job instanceof LoadJob || job instanceof StoreJob) {
            loadDue.put(job.jobId(), nanoTime() + loadNanos);
        }
        inner.submit(job);
    }

    @Override
    public List<TransferResult> poll() {
        held.addAll(inner.poll());
        return due();
    }

    @Override
    public List<TransferResult> await(Collection<Long> jobIds, Duration timeout) {
        Set<Long> left = new HashSet<>(jobIds);
        List<TransferResult> out = new ArrayList<>();
        long end = nanoTime() + timeout.toNanos();
        while (!left.isEmpty() && nanoTime() - end < 0) {
            for (TransferResult r : awaitAny(left, Duration.ofNanos(end - nanoTime()))) {
                left.remove(r.jobId());
                out.add(r);
            }
        }
        return out;
    }

    @Override
    public List<TransferResult> awaitAny(Collection<Long> jobIds, Duration timeout) {
        long end = nanoTime() + timeout.toNanos();
        while (true) {
            List<TransferResult> out = poll();
            if (!out.isEmpty() || nanoTime() - end >= 0) {
                return out;
            }
            if (inner.inFlight() > 0) {
                // The real copy is still running: wait for it in real time (the virtual clock stands still).
                held.addAll(inner.awaitAny(jobIds, Duration.ofMillis(1)));
            } else if (!held.isEmpty()) {
                clock.sleepUntil(Math.min(end, earliestDue())); // jump to the next load's end
            } else {
                return out; // nothing in flight: nothing will come
            }
        }
    }

    private long earliestDue() {
        long min = Long.MAX_VALUE;
        for (TransferResult r : held) {
            Long due = loadDue.get(r.jobId());
            min = Math.min(min, due == null ? nanoTime() : due);
        }
        return min;
    }

    /** Results whose time has passed; loads and stores report {@code loadTime} as their duration. */
    private List<TransferResult> due() {
        List<TransferResult> out = new ArrayList<>();
        long now = nanoTime();
        for (Iterator<TransferResult> it = held.iterator(); it.hasNext(); ) {
            TransferResult r = it.next();
            Long due = loadDue.get(r.jobId());
            if (due == null) {
                out.add(r);
                it.remove();
            } else if (now - due >= 0) {
                loadDue.remove(r.jobId());
                out.add(new TransferResult(r.jobId(), r.success(), r.bytes(), loadNanos, r.firstFailedChunk(), r.error()));
                it.remove();
            }
        }
        return out;
    }

    @Override
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public int inFlight() {
        return inner.inFlight() + held.size();
    }

    @Override
    public void close() {
        inner.close();
    }
}
