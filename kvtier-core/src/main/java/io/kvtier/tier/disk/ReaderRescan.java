package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The restart scan of a disk tier that only reads its directory ({@link DiskStore.Role#READER}),
 * repeated. The owner keeps writing chunks after a reader's first scan, and a reader learns of a
 * file only by listing the directory, so once a scan is over and drained, another one starts
 * {@code every} later, and so on until {@link #close()}. A rescan passes over the files of chunks
 * the tier holds when it starts (and the tier ignores any report of one it holds); a chunk the owner deletes after a scan saw it fails its one load and is a miss
 * (the tier drops it then).
 *
 * <p>{@link #progress()} is the first scan's (the restart scan a user watches); the rescans are
 * quiet. {@link #finished()} and {@link #awaitEnd} are the current scan's, so the tier's record of
 * chunks dropped during a scan lasts for each scan, and a wait followed by a drain adopts what the
 * scan running at the wait found.
 *
 * <p>Engine thread only, like {@link RestartScan#drain}; each scan runs on its own threads.
 */
public final class ReaderRescan implements RestartScan {

    private final RestartScan first;
    private final Supplier<? extends RestartScan> next;
    private final long everyNanos;
    private final LongSupplier nanoTime;
    private RestartScan current;
    /** When the current scan was seen over and drained (a rescan is due {@code every} later); -1 while it runs. */
    private long overAt = -1;
    private long rescans;
    private boolean closed;

    /**
     * @param first    the restart scan, already started
     * @param next     starts a new (quiet) scan of the same directory
     * @param every    time from the end of one scan to the start of the next; zero rescans at the next drain
     * @param nanoTime the clock ({@link System#nanoTime} but in tests)
     */
    public ReaderRescan(RestartScan first, Supplier<? extends RestartScan> next, Duration every, LongSupplier nanoTime) {
        if (every.isNegative()) {
            throw new IllegalArgumentException("rescan interval must not be negative, got " + every);
        }
        this.first = Objects.requireNonNull(first, "first");
        this.current = first;
        this.next = Objects.requireNonNull(next, "next");
        this.everyNanos = every.toNanos();
        this.nanoTime = nanoTime;
    }

    /**
     * A reader's scans of {@code store}'s directory: {@code first} now, then quiet ones every
     * {@code every} that pass over the files of the keys {@code known} gives when each starts (the
     * tier's own, on the engine thread).
     */
    public static ReaderRescan of(DiskStore store, RestartScan first, Duration every,
                                  Supplier<? extends Collection<BlockKey>> known) {
        return new ReaderRescan(first, () -> DiskIndexScan.start(store, 1, p -> { }, Set.copyOf(known.get())),
                every, System::nanoTime);
    }

    @Override
    public int drain(int max, Consumer<? super ScannedChunk> sink) {
        int n = current.drain(max, sink);
        if (closed || !current.finished()) {
            return n;
        }
        long now = nanoTime.getAsLong();
        if (overAt < 0) {
            overAt = now;
        }
        if (now - overAt >= everyNanos) {
            if (current != first) {
                current.close();
            }
            current = next.get();
            overAt = -1;
            rescans++;
        }
        return n;
    }

    @Override
    public boolean finished() {
        return current.finished();
    }

    @Override
    public DiskIndexScan.Progress progress() {
        return first.progress();
    }

    @Override
    public boolean awaitEnd(Duration timeout) throws InterruptedException {
        return current.awaitEnd(timeout);
    }

    /** Scans started after the first one. */
    public long rescans() {
        return rescans;
    }

    @Override
    public void close() {
        closed = true;
        if (current != first) {
            current.close();
        }
        first.close();
    }
}
