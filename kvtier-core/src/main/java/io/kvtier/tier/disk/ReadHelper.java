package io.kvtier.tier.disk;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One daemon thread per JVM ({@code kvtier-disk-read-helper}) that reads and checksums pieces of
 * chunk files ({@link PieceRead}) beside the thread that asked for them.
 *
 * <p>Why: on a page-cache hit, verifying costs about half as much as the read itself (CRC32C
 * about 67 GB/s, the copy out of the page cache 20-30 GB/s on the reference machine), so a
 * verified read on one thread reaches only about two thirds of a plain read. Handing the helper
 * only the checksum of bytes the reader copied was measured and does not pay for 256 KiB chunks:
 * the bytes sit in the reader's cache, and checksumming them from another core is no faster than
 * doing it locally. So each piece is read and checksummed by the same thread.
 *
 * <p>It spins for {@link #SPIN_NANOS} after its last piece (a request's chunk loads come
 * microseconds apart, and waking a parked thread takes longer than a piece), then parks until
 * the next {@link #offer}. It never holds work hostage: a reader that finds the helper busy or
 * asleep does every piece itself.
 */
final class ReadHelper {

    /** How long the idle helper keeps polling before it parks. */
    static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    private static final ReadHelper INSTANCE = new ReadHelper();

    private final ConcurrentLinkedQueue<PieceRead> jobs = new ConcurrentLinkedQueue<>();
    private final Thread thread;

    private ReadHelper() {
        thread = Thread.ofPlatform().name("kvtier-disk-read-helper").daemon().start(this::run);
    }

    /** The JVM's helper (started on first use). */
    static ReadHelper get() {
        return INSTANCE;
    }

    /** Whether the helper thread may write {@code dst} (not a segment confined to another thread). */
    boolean canWrite(MemorySegment dst) {
        return dst.isAccessibleBy(thread);
    }

    /** Makes {@code job}'s pieces available to the helper; its reader still must finish or cancel it. */
    void offer(PieceRead job) {
        jobs.add(job);
        LockSupport.unpark(thread);
    }

    /** Forgets {@code job} (its reader finished or cancelled it). */
    void remove(PieceRead job) {
        jobs.remove(job);
    }

    private void run() {
        long idleSince = System.nanoTime();
        while (true) {
            if (runOne()) {
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince < SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                LockSupport.park(this); // offer() unparks; a stale permit only costs one more pass
                idleSince = System.nanoTime();
            }
        }
    }

    /** Runs one piece of the oldest job that has one left; drops jobs with nothing left to claim. */
    private boolean runOne() {
        for (PieceRead job : jobs) {
            if (job.runOne()) {
                return true;
            }
            jobs.remove(job);
        }
        return false;
    }
}
