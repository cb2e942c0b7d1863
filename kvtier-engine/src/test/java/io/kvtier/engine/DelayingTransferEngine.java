package io.kvtier.engine;

import io.kvtier.offload.transfer.LoadJob;
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
import java.util.concurrent.locks.LockSupport;

/**
 * A test fake: a {@link TransferEngine} that makes the host tier slow to read. It runs every job
 * on the wrapped engine, but hands out a load job's result only once {@code loadDelay} has
 * passed since the job was submitted, with that whole time as the job's duration (what a slow
 * tier costs a waiting request). Other jobs pass through. Engine thread only.
 */
final class DelayingTransferEngine implements TransferEngine {

    private final TransferEngine inner;
    private final long loadDelayNanos;
    private final Map<Long, Long> loadSubmitted = new HashMap<>();
    private final List<TransferResult> held = new ArrayList<>();

    DelayingTransferEngine(TransferEngine inner, Duration loadDelay) {
        this.inner = inner;
        this.loadDelayNanos = loadDelay.toNanos();
    }

    @Override
    public void submit(TransferJob job) {
        if (job instanceof LoadJob) {
            loadSubmitted.put(job.jobId(), nanoTime());
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
                held.addAll(inner.awaitAny(jobIds, Duration.ofMillis(1)));
            } else {
                LockSupport.parkNanos(Math.min(1_000_000, end - nanoTime()));
            }
        }
    }

    /** Results whose delay has passed; loads report their delayed duration. */
    private List<TransferResult> due() {
        List<TransferResult> out = new ArrayList<>();
        long now = nanoTime();
        for (Iterator<TransferResult> it = held.iterator(); it.hasNext(); ) {
            TransferResult r = it.next();
            Long submitted = loadSubmitted.get(r.jobId());
            if (submitted == null) {
                out.add(r);
                it.remove();
            } else if (now - submitted >= loadDelayNanos) {
                loadSubmitted.remove(r.jobId());
                out.add(new TransferResult(r.jobId(), r.success(), r.bytes(), now - submitted, r.firstFailedChunk(), r.error()));
                it.remove();
            }
        }
        return out;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
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
