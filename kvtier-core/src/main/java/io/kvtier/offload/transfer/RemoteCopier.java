package io.kvtier.offload.transfer;

import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.RemoteFailure;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteStore;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The data path between the host tier's slots and the remote store: runs one {@link RemoteJob}
 * on a transfer thread. A value is the chunk's {@link ChunkHeader} followed by its payload. The
 * answer of a read lands in a buffer owned by this copier and is verified there; it is copied
 * into the destination slot only under the job's claim, so a read that outlived its deadline
 * never writes a slot the scheduler has already given back.
 */
public final class RemoteCopier {

    /** Causes, the first word of a failed remote job's error. */
    public static final String MISS = "miss";
    public static final String VERIFY = "verify";
    public static final String TIMEOUT = "timeout";
    public static final String OVERSIZE = "oversize";

    /** The worker's side of a job's claim (see {@link AsyncTransferEngine}). */
    interface Claim {
        /** Claims the job's memory; false if the job expired (touch nothing). */
        boolean enter();

        /** Releases the claim taken by {@link #enter()}. */
        void exit();
    }

    private final HostSlab slab;
    private final RemoteStore store;
    private final RemoteKeys keys;
    private final long bytesPerBlock;

    public RemoteCopier(HostSlab slab, RemoteStore store, RemoteKeys keys, long bytesPerBlock) {
        this.slab = slab;
        this.store = store;
        this.keys = keys;
        this.bytesPerBlock = bytesPerBlock;
    }

    public RemoteStore store() {
        return store;
    }

    private long payloadBytes(ChunkCopy c) {
        return c.blockCount() * bytesPerBlock;
    }

    /**
     * Runs the job; null if it expired meanwhile (the engine thread reports it).
     */
    TransferResult run(RemoteJob job, Claim claim) {
        long start = System.nanoTime();
        List<ChunkCopy> chunks = job.chunks();
        List<CompletableFuture<?>> answers = new ArrayList<>(chunks.size());
        long bytes = 0;
        for (int i = 0; i < chunks.size(); i++) {
            ChunkCopy c = chunks.get(i);
            String key = keys.of(c.key());
            switch (job.kind()) {
                case PROBE -> answers.add(store.touch(key));
                case READ -> answers.add(store.get(key));
                case WRITE -> {
                    long size = ChunkHeader.encodedSize(c.tokensShared().length) + payloadBytes(c);
                    if (size > store.maxValueBytes()) {
                        answers.add(CompletableFuture.failedFuture(new IllegalStateException(OVERSIZE + ": value of "
                                + size + " bytes exceeds the remote limit of " + store.maxValueBytes() + " bytes; not sent")));
                        continue;
                    }
                    if (!claim.enter()) {
                        return null;
                    }
                    byte[] value;
                    try {
                        value = valueOf(c);
                    } finally {
                        claim.exit();
                    }
                    answers.add(value == null ? CompletableFuture.failedFuture(new IllegalStateException(
                            "error: host slot " + c.slot() + " does not hold chunk " + c.key().shortHex()))
                            : store.set(key, value));
                }
            }
        }
        for (int i = 0; i < chunks.size(); i++) {
            ChunkCopy c = chunks.get(i);
            Object answer;
            try {
                answer = answers.get(i).get(Math.max(0, job.deadlineNanos() - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return failed(job, bytes, start, i, TIMEOUT + ": no answer by the job's deadline");
            } catch (ExecutionException e) {
                Throwable t = e.getCause();
                String msg = t instanceof IllegalStateException ? t.getMessage()
                        : RemoteFailure.causeOf(t).label() + ": " + t.getMessage();
                return failed(job, bytes, start, i, msg);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return failed(job, bytes, start, i, "error: interrupted");
            }
            switch (job.kind()) {
                case PROBE -> {
                    if (!Boolean.TRUE.equals(answer)) {
                        return failed(job, bytes, start, i, MISS + ": chunk " + c.key().shortHex() + " is not in the store");
                    }
                }
                case READ -> {
                    String problem = answer == null ? MISS + ": chunk " + c.key().shortHex() + " is not in the store"
                            : verified((byte[]) answer, c);
                    if (problem != null) {
                        return failed(job, bytes, start, i, problem);
                    }
                    if (!claim.enter()) {
                        return null;
                    }
                    try {
                        copyIntoSlot((byte[]) answer, c);
                    } finally {
                        claim.exit();
                    }
                    bytes += payloadBytes(c);
                }
                case WRITE -> bytes += payloadBytes(c);
            }
        }
        return TransferResult.ok(job.jobId(), bytes, System.nanoTime() - start);
    }

    /** Runs a job outside a transfer engine, with nothing else touching its slots (benchmarks). */
    public TransferResult runForBench(RemoteJob job) {
        return run(job, new Claim() {
            @Override
            public boolean enter() {
                return true;
            }

            @Override
            public void exit() {
            }
        });
    }

    private static TransferResult failed(RemoteJob job, long bytes, long start, int chunk, String error) {
        return TransferResult.failed(job.jobId(), bytes, System.nanoTime() - start, chunk, error);
    }

    /** The slot's chunk as a value (header, then payload), or null if the slot does not hold it. */
    private byte[] valueOf(ChunkCopy c) {
        MemorySegment payload = slab.payloadOf(c.slot(), payloadBytes(c));
        ChunkHeader.Verification v = ChunkHeader.verifyAt(slab.headerOf(c.slot()), 0, c.namespace(), c.key(),
                c.parent(), c.tokensShared(), payload);
        if (!v.ok()) {
            return null;
        }
        long header = ChunkHeader.encodedSize(c.tokensShared().length);
        byte[] value = new byte[Math.toIntExact(header + payload.byteSize())];
        MemorySegment out = MemorySegment.ofArray(value);
        MemorySegment.copy(slab.headerOf(c.slot()), 0, out, 0, header);
        MemorySegment.copy(payload, 0, out, header, payload.byteSize());
        return value;
    }

    /** Null if {@code value} is the expected chunk; else why not (and the bad value is deleted). */
    private String verified(byte[] value, ChunkCopy c) {
        long header = ChunkHeader.encodedSize(c.tokensShared().length);
        long expected = header + payloadBytes(c);
        String problem;
        if (value.length != expected) {
            problem = "value of " + value.length + " bytes, expected " + expected + " (truncated or foreign)";
        } else {
            MemorySegment v = MemorySegment.ofArray(value);
            ChunkHeader.Verification check = ChunkHeader.verifyAt(v, 0, c.namespace(), c.key(), c.parent(),
                    c.tokensShared(), v.asSlice(header));
            problem = check instanceof ChunkHeader.Verification.Corrupt bad ? bad.reason() : null;
        }
        if (problem == null) {
            return null;
        }
        store.delete(keys.of(c.key()));
        return VERIFY + ": chunk " + c.key().shortHex() + " in the store is bad: " + problem;
    }

    private void copyIntoSlot(byte[] value, ChunkCopy c) {
        long header = ChunkHeader.encodedSize(c.tokensShared().length);
        MemorySegment v = MemorySegment.ofArray(value);
        MemorySegment.copy(v, 0, slab.headerOf(c.slot()), 0, header);
        MemorySegment.copy(v, header, slab.payloadOf(c.slot(), payloadBytes(c)), 0, payloadBytes(c));
    }
}
