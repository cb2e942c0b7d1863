package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The restart scan of a disk tier that only reads its directory ({@link DiskStore.Role#READER}),
 * repeated. The owner keeps writing and deleting chunks after a reader's first scan, and a reader
 * learns of either only by listing the directory, so once a scan is over and drained, another
 * one starts {@code every} later, and so on until {@link #close()}. A rescan is given the keys the
 * tier holds when it starts: it passes over their files, and those of them its listing did not
 * find are {@link #takeVanished() vanished} (the owner deleted them), for the tier to drop rather
 * than to count until a failed load each.
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
    private final Function<Set<BlockKey>, DiskIndexScan> next;
    private final Supplier<? extends Collection<BlockKey>> known;
    private final long everyNanos;
    private final LongSupplier nanoTime;
    private RestartScan current;
    /** The keys the current rescan was given (empty for the first scan). */
    private Set<BlockKey> knownAtStart = Set.of();
    /** Vanished keys found by the last rescan, not yet taken by the tier. */
    private List<BlockKey> vanished = List.of();
    /** When the current scan was seen over and drained (a rescan is due {@code every} later); -1 while it runs. */
    private long overAt = -1;
    private long rescans;
    private boolean closed;

    /**
     * @param first    the restart scan, already started
     * @param next     starts a new (quiet) scan of the same directory passing over the given keys' files
     * @param known    the keys the tier holds now (called on the engine thread as each rescan starts)
     * @param every    time from the end of one scan to the start of the next; zero rescans at the next drain
     * @param nanoTime the clock ({@link System#nanoTime} but in tests)
     */
    public ReaderRescan(RestartScan first, Function<Set<BlockKey>, DiskIndexScan> next,
                        Supplier<? extends Collection<BlockKey>> known, Duration every, LongSupplier nanoTime) {
        if (every.isNegative()) {
            throw new IllegalArgumentException("rescan interval must not be negative, got " + every);
        }
        this.first = Objects.requireNonNull(first, "first");
        this.current = first;
        this.next = Objects.requireNonNull(next, "next");
        this.known = Objects.requireNonNull(known, "known");
        this.everyNanos = every.toNanos();
        this.nanoTime = nanoTime;
    }

    /** A reader's scans of {@code store}'s directory: {@code first} now, then quiet ones every {@code every}. */
    public static ReaderRescan of(DiskStore store, RestartScan first, Duration every,
                                  Supplier<? extends Collection<BlockKey>> known) {
        return new ReaderRescan(first, keys -> DiskIndexScan.start(store, 1, p -> { }, keys), known, every, System::nanoTime);
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
            if (current instanceof DiskIndexScan rescan && current != first && rescan.listedKeys() != null) {
                Set<BlockKey> gone = new HashSet<>(knownAtStart);
                gone.removeAll(rescan.listedKeys());
                vanished = List.copyOf(gone);
            }
        }
        if (now - overAt >= everyNanos) {
            if (current != first) {
                current.close();
            }
            Set<BlockKey> keys = new HashSet<>(known.get());
            vanished.forEach(keys::remove); // not yet dropped by the tier, but no longer known here
            knownAtStart = Set.copyOf(keys);
            current = next.apply(knownAtStart);
            overAt = -1;
            rescans++;
        }
        return n;
    }

    /**
     * The keys the tier held when the last rescan started whose files its listing did not find
     * (deleted by the owner since), once each; empty if none or while no rescan has ended.
     */
    @Override
    public List<BlockKey> takeVanished() {
        List<BlockKey> v = vanished;
        vanished = List.of();
        return v;
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
