package io.kvtier.offload.transfer;

import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.MemoryClaim;
import io.kvtier.tier.remote.RemoteFailure;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteStore;
import io.kvtier.tier.remote.RemoteTrace;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The data path between the host tier's slots and the remote store: runs one {@link RemoteJob}
 * on a transfer thread. A value is the chunk's {@link ChunkHeader} followed by its payload. The
 * answer of a read is verified where the store's client received it (no array per value) and
 * copied into the destination slot only under the job's claim, so a read that outlived its
 * deadline never writes a slot the scheduler has already given back.
 */
public final class RemoteCopier {

    /** Causes, the first word of a failed remote job's error. */
    public static final String MISS = "miss";
    public static final String VERIFY = "verify";
    public static final String TIMEOUT = "timeout";
    public static final String OVERSIZE = "oversize";

    /**
     * The worker's side of a job's claim (see {@link AsyncTransferEngine}): {@link #enter()} claims
     * the job's memory, false if the job expired (touch nothing).
     */
    interface Claim extends MemoryClaim {
        /** Whether the job expired or ended: {@link #enter()} will not succeed again (touch nothing). */
        boolean ended();
    }

    /** Answer of a read whose job ended before its value came: nothing was written. */
    private static final String ENDED = "ended";

    /**
     * Where a read value's payload is checked (CRC32C) and copied on to the device: false (the
     * default), on the store's I/O thread where it arrives, checked before it is copied into its
     * slot; true ({@code -Dkvtier.remote.checkOnTaker=true}), the I/O thread only copies the value
     * (its size checked) into its reserved slot, and the job's own thread checks it there and copies
     * it to the device, so the I/O thread goes back to the socket sooner. Either way a chunk counts
     * only once checked; a bad one fails the job there and its slot is given back unread.
     */
    static final boolean CHECK_ON_TAKER = Boolean.getBoolean("kvtier.remote.checkOnTaker");

    /**
     * Bytes of values a read job has asked for and not yet taken, at most ({@value #MIN_WINDOW_VALUES}
     * values at least). The store's timeout of a command starts when it is sent, and the values on
     * one connection arrive one after another, so a window bounds how many bytes queue ahead of any
     * GET. It is small because the server pays for every value asked for: Redis copies each answered
     * value into a reply buffer of its own, allocated when the GET runs and freed once written. With
     * 32 MiB in flight (27 values of the 110M shape) the server allocated about 32 MiB of fresh
     * reply memory at each promotion, and on this VM, where memory the allocator had given back is
     * slow to touch again, it served the 73 MB prefix at 2.5 ms a MB: the remote TTFT of the 110M
     * shape was 278-284 ms, 4.5-4.7x recompute; with 2 MiB (two values) 128-141 ms, 9.5-10.6x, A B
     * A B in one session (docs/design-notes.md, "A small read window"). Two values in flight keep
     * the server busy while the client checks and copies the one before. More than a link's
     * bandwidth-delay product (1.25 GB/s x 1 ms is 1.25 MB) buys nothing.
     * {@code -Dkvtier.remote.readWindowBytes} for experiments.
     */
    public static final long READ_WINDOW_BYTES = Long.getLong("kvtier.remote.readWindowBytes", 2L << 20);

    /** Values a read job keeps in flight at least, whatever their size (see {@link #READ_WINDOW_BYTES}). */
    static final int MIN_WINDOW_VALUES = 2;

    /**
     * Bytes of values a read job's deadline allows per two timeouts of the store ({@link #readDeadline}):
     * a progress deadline, the job having at least one timeout for every 32 MiB it reads.
     */
    static final long DEADLINE_BYTES = 32L << 20;

    /**
     * Bytes of values a read job asks for at once, before the window opens one value per answer
     * ({@link ReadWindow}). Small values are bound by each GET's round trip, not by the server's
     * copies: with two GETs at first, a job of 8 values of 256 KiB waited for several answers
     * before all its GETs were out (against {@code redis-benchmark -P 8}, which sends 8 at once),
     * while 1 MiB of values costs the server well under a millisecond to copy before it replies.
     * {@code -Dkvtier.remote.firstBytes} for experiments.
     */
    static final long FIRST_BYTES = Long.getLong("kvtier.remote.firstBytes", 1L << 20);

    /** Bytes of value arrays kept for reuse at most ({@link ValueArrays}). */
    static final long VALUE_ARRAY_BYTES = 32L << 20;

    private final HostSlab slab;
    private final RemoteStore store;
    private final RemoteKeys keys;
    private final long bytesPerBlock;
    private final long readWindowBytes;
    private final int firstGets;
    private final long firstBytes;
    private final boolean checkOnTaker;
    /** Bytes of SET values sent as one batch ({@link SetBatch#BYTES}; 0 in comparisons: one by one). */
    private long setBatchBytes = SetBatch.BYTES;
    /** Arrays of store values, reused once their SET is answered. */
    private final ValueArrays values = new ValueArrays(VALUE_ARRAY_BYTES);
    /** Where the one line about values above the store's limit goes (null: nowhere). */
    private volatile java.util.function.Consumer<String> warn;
    private final java.util.concurrent.atomic.AtomicBoolean warnedOversize = new java.util.concurrent.atomic.AtomicBoolean();

    public RemoteCopier(HostSlab slab, RemoteStore store, RemoteKeys keys, long bytesPerBlock) {
        this(slab, store, keys, bytesPerBlock, READ_WINDOW_BYTES, ReadWindow.FIRST_GETS, FIRST_BYTES, CHECK_ON_TAKER);
    }

    /**
     * For tests: a read keeps {@code readWindowBytes} of values asked for (one value at least),
     * starts with {@code firstGets} GETs ({@link ReadWindow}; no {@link #FIRST_BYTES} burst), and
     * with {@code checkOnTaker} checks each value's payload (and copies it to the device) on the
     * job's thread, not where it arrived ({@link #CHECK_ON_TAKER}).
     */
    RemoteCopier(HostSlab slab, RemoteStore store, RemoteKeys keys, long bytesPerBlock, long readWindowBytes, int firstGets,
                 boolean checkOnTaker) {
        this(slab, store, keys, bytesPerBlock, readWindowBytes, firstGets, 0, checkOnTaker);
    }

    /** For tests: as above, a read starting with {@code firstBytes} of GETs, at least {@code firstGets}. */
    RemoteCopier(HostSlab slab, RemoteStore store, RemoteKeys keys, long bytesPerBlock, long readWindowBytes, int firstGets,
                 long firstBytes, boolean checkOnTaker) {
        this.slab = slab;
        this.store = store;
        this.keys = keys;
        this.bytesPerBlock = bytesPerBlock;
        this.readWindowBytes = readWindowBytes;
        this.firstGets = firstGets;
        this.firstBytes = firstBytes;
        this.checkOnTaker = checkOnTaker;
    }

    /** For comparisons ({@code RemoteWriteComparison}): SETs sent in batches of this many bytes (0: one by one). */
    RemoteCopier setBatchBytes(long bytes) {
        setBatchBytes = bytes;
        return this;
    }

    public RemoteStore store() {
        return store;
    }

    /**
     * Where to say, once, that chunks are not written because their values exceed the store's
     * limit ({@code --remote-max-value}, or the server's {@code proto-max-bulk-len}): every chunk
     * of a model has the same size, so this is a setting to change, not a passing fault, and the
     * counter ({@code store_failures} {@value #OVERSIZE}) alone said it only at the end. Null (the
     * default) says nothing.
     */
    public void warnOversize(java.util.function.Consumer<String> sink) {
        warn = sink;
    }

    private long payloadBytes(ChunkCopy c) {
        return c.blockCount() * bytesPerBlock;
    }

    /** {@link #run(RemoteJob, Claim, ChunkCopier)} of a job that touches no device block. */
    TransferResult run(RemoteJob job, Claim claim) {
        return run(job, claim, null);
    }

    /**
     * Runs the job; null if it expired meanwhile (the engine thread reports it).
     *
     * @param device the device side of a {@link RemoteJob.Kind#LOAD} (null for the other kinds)
     */
    TransferResult run(RemoteJob job, Claim claim, ChunkCopier device) {
        return run(job, claim, device, () -> { });
    }

    /**
     * As {@link #run(RemoteJob, Claim, ChunkCopier)}; {@code sent} runs once a probe's or write's
     * commands are all sent, before their answers are awaited (a write worker lets the next job
     * send then), and not at all if the job ended before.
     */
    TransferResult run(RemoteJob job, Claim claim, ChunkCopier device, Runnable sent) {
        boolean reads = job.kind() == RemoteJob.Kind.READ || job.kind() == RemoteJob.Kind.LOAD;
        if (!reads) {
            return runAll(job, claim, sent);
        }
        ChunkCopier toDevice = job.toDevice() ? java.util.Objects.requireNonNull(device, "device") : null;
        List<ChunkCopy> chunks = job.chunks();
        long value = chunks.isEmpty() ? 1 : valueBytes(chunks.getFirst());
        ReadWindow window = new ReadWindow(chunks.size(), readWindow(value), firstGets(value),
                job::inHost, i -> read(chunks.get(i), claim, toDevice));
        if (RemoteTrace.ON) {
            RemoteTrace.mark(job.kind() + " job " + job.jobId() + " started: " + chunks.size() + " chunks");
        }
        try {
            return take(job, claim, window.start(), toDevice);
        } finally {
            window.stop();
        }
    }

    /**
     * A probe or a write: every command sent at once, pipelined, then ({@code sent} run) the answers
     * taken in order. Once sent, a write reads its slots no more.
     * A write's SETs go out in batches ({@link SetBatch}, {@link RemoteStore#setAll}) of about {@link SetBatch#BYTES},
     * each sent once its values are copied and checked, while the next ones are copied.
     */
    private TransferResult runAll(RemoteJob job, Claim claim, Runnable sent) {
        List<ChunkCopy> chunks = job.chunks();
        List<CompletableFuture<?>> answers = new ArrayList<>(chunks.size());
        SetBatch batch = new SetBatch(store, values, setBatchBytes, answers);
        for (ChunkCopy c : chunks) {
            String key = keys.of(c.key());
            if (job.kind() == RemoteJob.Kind.PROBE) {
                answers.add(store.touch(key));
                continue;
            }
            long size = ChunkHeader.encodedSize(c.tokensShared().length) + payloadBytes(c);
            long limit = store.maxValueBytes();
            if (size > limit) {
                answers.add(CompletableFuture.failedFuture(new IllegalStateException(OVERSIZE + ": value of "
                        + size + " bytes exceeds the remote limit of " + limit + " bytes; not sent")));
                warnOversize(size, limit);
                continue;
            }
            if (store.setsFromMemory(size)) {
                batch.send(); // in chunk order: parents first
                if (!setFromSlot(c, key, claim, answers)) {
                    batch.drop();
                    return null;
                }
                continue;
            }
            if (!claim.enter()) {
                batch.drop();
                return null;
            }
            byte[] value;
            try {
                value = valueOf(c);
            } finally {
                claim.exit();
            }
            if (value == null) {
                answers.add(notHeld(c));
                continue;
            }
            batch.add(key, value);
        }
        batch.send();
        sent.run();
        return take(job, claim, answers, null);
    }

    /**
     * A SET written straight from chunk {@code c}'s slot ({@link RemoteStore#setFrom}), verified
     * there first (header and CRC32C of the payload, as a read is): its answer goes to
     * {@code answers}. False if the job ended (touch nothing more). The slot holds its chunk
     * from the check to the last byte sent: every read of it is under the job's claim, and while the
     * job can be claimed its slots are not reused.
     */
    private boolean setFromSlot(ChunkCopy c, String key, Claim claim, List<CompletableFuture<?>> answers) {
        if (!claim.enter()) {
            return false;
        }
        boolean holds;
        try {
            holds = verifyInSlot(c).ok();
        } finally {
            claim.exit();
        }
        MemorySegment header = slab.headerOf(c.slot()).asSlice(0, ChunkHeader.encodedSize(c.tokensShared().length));
        answers.add(holds ? store.setFrom(key, header, slab.payloadOf(c.slot(), payloadBytes(c)), claim) : notHeld(c));
        return !claim.ended();
    }

    /** Chunk {@code c} checked where it sits in its host slot (call under the job's claim). */
    private ChunkHeader.Verification verifyInSlot(ChunkCopy c) {
        return ChunkHeader.verifyAt(slab.headerOf(c.slot()), 0, c.namespace(), c.key(), c.parent(), c.tokensShared(),
                slab.payloadOf(c.slot(), payloadBytes(c)));
    }

    private static CompletableFuture<Void> notHeld(ChunkCopy c) {
        return CompletableFuture.failedFuture(new IllegalStateException(
                "error: host slot " + c.slot() + " does not hold chunk " + c.key().shortHex()));
    }

    private void warnOversize(long size, long limit) {
        java.util.function.Consumer<String> sink = warn;
        if (sink != null && warnedOversize.compareAndSet(false, true)) {
            sink.accept("remote tier: a chunk's value is " + size + " bytes, above the store's limit of " + limit
                    + " bytes (--remote-max-value, or the server's proto-max-bulk-len less 64 KiB): no chunk is written"
                    + " to the store (counted in store_failures as oversize)");
        }
    }

    /**
     * Takes the job's answers in chunk order: the job's result at the first chunk that failed, or
     * ok; null if the job ended (expired) meanwhile.
     */
    private TransferResult take(RemoteJob job, Claim claim, List<? extends CompletableFuture<?>> answers,
                                ChunkCopier toDevice) {
        long start = System.nanoTime();
        List<ChunkCopy> chunks = job.chunks();
        long bytes = 0;
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
            if (RemoteTrace.ON && job.kind() != RemoteJob.Kind.WRITE) {
                RemoteTrace.mark(job.kind() + " answer " + i + " taken");
            }
            if (job.inHost(i)) {
                answer = fromHost(c, claim, toDevice);
            } else if (checkOnTaker && answer == null && (job.kind() == RemoteJob.Kind.READ || job.kind() == RemoteJob.Kind.LOAD)) {
                answer = checkInSlot(c, claim, toDevice);
            }
            switch (job.kind()) {
                case PROBE -> {
                    if (!Boolean.TRUE.equals(answer)) {
                        return failed(job, bytes, start, i, MISS + ": chunk " + c.key().shortHex() + " is not in the store");
                    }
                }
                case READ, LOAD -> {
                    if (ENDED.equals(answer)) {
                        return null;
                    }
                    if (answer != null) {
                        return failed(job, bytes, start, i, (String) answer);
                    }
                    bytes += payloadBytes(c);
                }
                case WRITE -> bytes += payloadBytes(c);
            }
        }
        if (RemoteTrace.ON && job.kind() != RemoteJob.Kind.WRITE) {
            RemoteTrace.mark(job.kind() + " job " + job.jobId() + " done");
        }
        return TransferResult.ok(job.jobId(), bytes, System.nanoTime() - start);
    }

    /** Bytes of chunk {@code c}'s value: header and payload. */
    private long valueBytes(ChunkCopy c) {
        return ChunkHeader.encodedSize(c.tokensShared().length) + payloadBytes(c);
    }

    /**
     * GETs a read job keeps in flight: {@link #READ_WINDOW_BYTES} of its values of {@code value}
     * bytes, at least {@link #MIN_WINDOW_VALUES}.
     */
    private int readWindow(long value) {
        return (int) Math.max(MIN_WINDOW_VALUES, Math.min(Integer.MAX_VALUE, readWindowBytes / value));
    }

    /**
     * GETs a read job sends at once: {@link #FIRST_BYTES} of its values of {@code value} bytes, at
     * least {@code firstGets} ({@link ReadWindow} caps it at the window).
     */
    private int firstGets(long value) {
        return (int) Math.max(firstGets, Math.min(Integer.MAX_VALUE, firstBytes / value));
    }

    /**
     * Deadline of a read job of {@code valueBytes} in all: twice the store's timeout per
     * {@link #DEADLINE_BYTES} of them, from {@code now}.
     */
    public static long readDeadline(long now, long timeoutNanos, long valueBytes) {
        long parts = Math.max(1, (valueBytes + DEADLINE_BYTES - 1) / DEADLINE_BYTES);
        return now + 2 * timeoutNanos * parts;
    }

    /** A claim nothing contends for: always entered, never ended (a job run outside a transfer engine). */
    static final Claim FREE = new Claim() {
        @Override
        public boolean enter() {
            return true;
        }

        @Override
        public void exit() {
        }

        @Override
        public boolean ended() {
            return false;
        }
    };

    /** Runs a job (not a {@link RemoteJob.Kind#LOAD}) outside a transfer engine, with nothing else touching its slots (benchmarks). */
    public TransferResult runForBench(RemoteJob job) {
        return run(job, FREE, null);
    }

    private static TransferResult failed(RemoteJob job, long bytes, long start, int chunk, String error) {
        return TransferResult.failed(job.jobId(), bytes, System.nanoTime() - start, chunk, error);
    }

    /**
     * The slot's chunk as a value (header, then payload), or null if the slot does not hold it.
     * The copy is verified, not the slot: what is checked is exactly what is sent, and the CRC
     * reads bytes the copy has just brought into the cache.
     */
    private byte[] valueOf(ChunkCopy c) {
        long payloadBytes = payloadBytes(c);
        long header = ChunkHeader.encodedSize(c.tokensShared().length);
        byte[] value = values.take(Math.toIntExact(header + payloadBytes));
        MemorySegment out = MemorySegment.ofArray(value);
        MemorySegment.copy(slab.headerOf(c.slot()), 0, out, 0, header);
        MemorySegment.copy(slab.payloadOf(c.slot(), payloadBytes), 0, out, header, payloadBytes);
        ChunkHeader.Verification v = ChunkHeader.verifyAt(out, 0, c.namespace(), c.key(), c.parent(), c.tokensShared(),
                out.asSlice(header, payloadBytes));
        if (!v.ok()) {
            values.give(value);   // never sent: nobody else holds it
            return null;
        }
        return value;
    }

    /**
     * A GET of chunk {@code c} whose value is checked and copied into the chunk's slot (and with
     * {@code device}, its device blocks) where it arrives: null when done, else why not.
     */
    private CompletableFuture<String> read(ChunkCopy c, Claim claim, ChunkCopier device) {
        if (RemoteTrace.ON) {
            RemoteTrace.mark("GET " + c.key().shortHex() + " sent");
        }
        return store.read(keys.of(c.key()), value -> intoSlot(value, c, claim, device));
    }

    /** Takes the job's claim, waiting while another copy of the job holds it; false if the job ended (touch nothing). */
    private static boolean enter(Claim claim) {
        while (!claim.enter()) {
            if (claim.ended()) {
                return false;
            }
            Thread.onSpinWait(); // another chunk of this job is being copied (a claim is held for one copy)
        }
        return true;
    }

    /**
     * A chunk of a load already whole in its host slot: verified there and copied into its device
     * blocks under the job's claim ({@link ChunkCopier#load}); null when done, else why not.
     */
    private static String fromHost(ChunkCopy c, Claim claim, ChunkCopier device) {
        if (!enter(claim)) {
            return ENDED;
        }
        try {
            return device.load(c) instanceof ChunkHeader.Verification.Corrupt bad
                    ? VERIFY + ": chunk " + c.key().shortHex() + " in the host tier is bad: " + bad.reason() : null;
        } finally {
            claim.exit();
        }
    }

    /**
     * A read chunk copied into its slot unchecked ({@link #CHECK_ON_TAKER}): verified there under
     * the job's claim and, with {@code device}, copied into its device blocks; a bad value is
     * deleted from the store. Null when done, else why not.
     */
    private String checkInSlot(ChunkCopy c, Claim claim, ChunkCopier device) {
        if (!enter(claim)) {
            return ENDED;
        }
        ChunkHeader.Verification v;
        try {
            v = device != null ? device.load(c) : verifyInSlot(c);
        } finally {
            claim.exit();
        }
        if (RemoteTrace.ON) {
            RemoteTrace.mark("value " + c.key().shortHex() + " checked in its slot" + (device != null ? ", copied to device" : ""));
        }
        if (v instanceof ChunkHeader.Verification.Corrupt bad) {
            store.delete(keys.of(c.key()));
            return VERIFY + ": chunk " + c.key().shortHex() + " in the store is bad: " + bad.reason();
        }
        return null;
    }

    /**
     * Verifies {@code value} (null: absent) as chunk {@code c} where it is (the store's receive
     * buffer) and only then copies it, header and payload, into the chunk's host slot under the
     * job's claim, and with {@code device} into the chunk's device blocks too: null when done,
     * else why not ({@link #ENDED}: the job expired, nothing was written). A bad value is
     * deleted. May run on the store's I/O thread, for several values of one job at once on a
     * cluster (one thread per node): a claim held by another waits for it.
     */
    private String intoSlot(ByteBuffer value, ChunkCopy c, Claim claim, ChunkCopier device) {
        if (value == null) {
            return MISS + ": chunk " + c.key().shortHex() + " is not in the store";
        }
        if (RemoteTrace.ON) {
            RemoteTrace.mark("value " + c.key().shortHex() + " received (" + value.remaining() + " B, "
                    + (value.isDirect() ? "direct" : "heap") + ")");
        }
        long header = ChunkHeader.encodedSize(c.tokensShared().length);
        long expected = header + payloadBytes(c);
        MemorySegment v = MemorySegment.ofBuffer(value);
        String problem;
        if (v.byteSize() != expected) {
            problem = "value of " + v.byteSize() + " bytes, expected " + expected + " (truncated or foreign)";
        } else if (checkOnTaker) {
            problem = null; // checked in its slot by the job's thread (checkInSlot) before it counts
        } else {
            ChunkHeader.Verification check = ChunkHeader.verifyAt(v, 0, c.namespace(), c.key(), c.parent(),
                    c.tokensShared(), v.asSlice(header));
            problem = check instanceof ChunkHeader.Verification.Corrupt bad ? bad.reason() : null;
        }
        if (problem != null) {
            store.delete(keys.of(c.key()));
            return VERIFY + ": chunk " + c.key().shortHex() + " in the store is bad: " + problem;
        }
        if (RemoteTrace.ON) {
            RemoteTrace.mark("value " + c.key().shortHex() + " verified");
        }
        if (!enter(claim)) {
            return ENDED;
        }
        try {
            MemorySegment.copy(v, 0, slab.headerOf(c.slot()), 0, header);
            MemorySegment.copy(v, header, slab.payloadOf(c.slot(), payloadBytes(c)), 0, payloadBytes(c));
            if (device != null && !checkOnTaker) {
                device.toDevice(c, v.asSlice(header)); // from where it arrived, while it is still in the cache
            }
        } finally {
            claim.exit();
        }
        if (RemoteTrace.ON) {
            RemoteTrace.mark("value " + c.key().shortHex() + " copied to slot and device");
        }
        return null;
    }
}
