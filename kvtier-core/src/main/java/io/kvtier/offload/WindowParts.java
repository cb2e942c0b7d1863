package io.kvtier.offload;

import io.kvtier.kv.KvGroup;
import io.kvtier.tier.HostTier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The sliding-window groups' schedulers of a model with several KV groups, seen from group 0's
 * (docs/kv-groups.md, "Offloading rules"). Group 0 (full attention) bounds every hit; this walks
 * it down until every window group's tiers hold the window that ends at it, starts every group's
 * load (a window group loads only that window), and merges the groups' {@link
 * LoadDone}s into one: the longest prefix valid in all groups. Engine thread only.
 */
final class WindowParts {

    private enum State { READY, WAIT, PROMOTE, MISSING }

    /** A load in every group for one request: {@code [hit, end)} in group 0, {@code [from[i], end)} in part i. */
    private static final class PendingLoad {
        final int hit;
        final int end;
        final int[] from;
        final int[] good;
        LoadDone full;
        int remaining;

        PendingLoad(int hit, int end, int parts) {
            this.hit = hit;
            this.end = end;
            this.from = new int[parts];
            this.good = new int[parts];
            this.remaining = parts + 1;
        }
    }

    private final OffloadScheduler full;
    private final List<OffloadScheduler> parts;
    private final List<OffloadScheduler> all;
    private final int chunk;
    private final int blockSize;
    private final Map<Long, PendingLoad> pending = new HashMap<>();

    WindowParts(OffloadScheduler full, List<OffloadScheduler> parts) {
        this.full = full;
        this.parts = List.copyOf(parts);
        List<OffloadScheduler> a = new ArrayList<>();
        a.add(full);
        a.addAll(parts);
        this.all = List.copyOf(a);
        this.chunk = full.config().blocksPerChunk();
        this.blockSize = full.blockSize();
    }

    List<OffloadScheduler> parts() {
        return parts;
    }

    OffloadScheduler part(int group) {
        for (OffloadScheduler p : parts) {
            if (p.group().index() == group) {
                return p;
            }
        }
        throw new IllegalArgumentException("no offload part for KV group " + group);
    }

    /** First block part {@code p} loads for a hit ending at block {@code n}: its window's, or the device hit's end. */
    private int from(OffloadScheduler p, int hit, int n) {
        return Math.max(hit, p.group().firstReadBlock(n * blockSize, blockSize));
    }

    private State state(OffloadScheduler p, SequenceView r, int hit, int n) {
        int from = from(p, hit, n);
        Lookup l = p.lookup(p.view(r), from, n / chunk);
        return switch (l) {
            case Lookup.Wait w -> State.WAIT;
            case Lookup.Miss m -> State.MISSING;
            case Lookup.Hit h -> from + h.blocks() >= n ? State.READY : State.MISSING;
            case Lookup.Promote q ->
                    (from / chunk + q.hostChunks() + q.diskChunks() + q.remoteChunks()) * chunk >= n ? State.PROMOTE : State.MISSING;
        };
    }

    /** Outcome of {@link #walk}: the boundary, whether a window part must promote first, or a wait. */
    private record Walk(int end, boolean promote, boolean waits) {
    }

    /** The largest chunk boundary in (hit, end] at which every window group can serve its window. */
    private Walk walk(SequenceView r, int hit, int end, boolean allowPromote) {
        for (int n = end; n > hit; n -= chunk) {
            boolean ok = true;
            boolean promote = false;
            for (OffloadScheduler p : parts) {
                State s = state(p, r, hit, n);
                if (s == State.WAIT) {
                    return new Walk(n, false, true);
                }
                promote |= s == State.PROMOTE;
                ok &= s == State.READY || allowPromote && s == State.PROMOTE;
            }
            if (ok) {
                return new Walk(n, promote, false);
            }
        }
        return new Walk(hit, false, false);
    }

    /** Cuts group 0's answer {@code found} to a boundary every window group serves (a hit one group cannot serve is never reported). */
    Lookup fit(SequenceView r, int hit, Lookup found) {
        return fit(r, hit, found, true);
    }

    private Lookup fit(SequenceView r, int hit, Lookup found, boolean allowPromote) {
        int first = hit / chunk;
        int hostEnd;
        int end;
        switch (found) {
            case Lookup.Hit h -> {
                hostEnd = hit + h.blocks();
                end = hostEnd;
            }
            case Lookup.Promote p -> {
                hostEnd = (first + p.hostChunks()) * chunk;
                end = (first + p.hostChunks() + p.diskChunks() + p.remoteChunks()) * chunk;
            }
            default -> {
                return found;
            }
        }
        Walk w = walk(r, hit, end, allowPromote);
        if (w.waits()) {
            return new Lookup.Wait("a window group's chunk of the prefix is being stored or loaded");
        }
        if (w.end() <= hit) {
            return new Lookup.Miss();
        }
        if (w.end() <= hostEnd) {
            return w.promote() ? new Lookup.Promote(w.end() / chunk - first, 0, 0)
                    : new Lookup.Hit(HostTier.NAME, w.end() - hit);
        }
        Lookup.Promote p = (Lookup.Promote) found;
        int behind = w.end() / chunk - first - p.hostChunks();
        return new Lookup.Promote(p.hostChunks(), p.diskChunks() > 0 ? behind : 0, p.diskChunks() > 0 ? 0 : behind);
    }

    /** Promotes, in every group, what the hit ending at {@code p}'s end needs in the host tier. */
    Lookup promote(SequenceView r, int hit, Lookup.Promote p) {
        int first = hit / chunk;
        int n = (first + p.hostChunks() + p.diskChunks() + p.remoteChunks()) * chunk;
        boolean started = false;
        for (OffloadScheduler part : parts) {
            if (state(part, r, hit, n) == State.PROMOTE) {
                int from = from(part, hit, n);
                var q = (Lookup.Promote) part.lookup(part.view(r), from, n / chunk);
                started |= part.promoteOwn(r, from, q) instanceof Lookup.Wait;
            }
        }
        Lookup own = p.diskChunks() + p.remoteChunks() > 0 ? full.promoteOwn(r, hit, p)
                : new Lookup.Hit(HostTier.NAME, (first + p.hostChunks()) * chunk - hit);
        if (started || own instanceof Lookup.Wait) {
            return new Lookup.Wait("promoting the prefix's chunks into the host tier of every KV group");
        }
        // Nothing could start (host tiers full of pinned chunks): what every group's host tier serves now.
        return own instanceof Lookup.Hit ? fit(r, hit, own, false) : own;
    }

    /** Starts every window group's load of the window ending at {@code hit + blocks}; group 0's is started by the caller. */
    void startLoad(SequenceView r, int hit, int blocks, int[][] tables) {
        int end = hit + blocks;
        PendingLoad pl = new PendingLoad(hit, end, parts.size());
        for (int i = 0; i < parts.size(); i++) {
            OffloadScheduler p = parts.get(i);
            pl.from[i] = from(p, hit, end);
            p.startLoadOwn(r, pl.from[i], end - pl.from[i], tables[p.group().index()]);
        }
        pending.put(r.id(), pl);
    }

    void onCommit(SequenceView r, int kvWritten, OffloadScheduler.GroupTables tables) {
        for (OffloadScheduler p : parts) {
            p.onCommit(r, kvWritten, tables);
        }
    }

    List<LoadDone> poll() {
        List<LoadDone> out = new ArrayList<>();
        for (OffloadScheduler s : all) {
            merge(s, s.pollOwn(), out);
        }
        return out;
    }

    /** Waits (in slices over the groups' transfer engines) until a job of any group ends or {@code timeout} passes. */
    List<LoadDone> awaitAny(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int before = inFlight();
        List<LoadDone> out = new ArrayList<>();
        while (true) {
            for (OffloadScheduler s : all) {
                if (s.jobs().isEmpty()) {
                    merge(s, s.pollOwn(), out);
                    continue;
                }
                long slice = Math.max(0, Math.min(deadline - System.nanoTime(), SLICE_NANOS));
                merge(s, s.awaitAnyOwn(Duration.ofNanos(slice)), out);
            }
            if (!out.isEmpty() || inFlight() != before || !busy() || System.nanoTime() - deadline >= 0) {
                return out;
            }
        }
    }

    private static final long SLICE_NANOS = 2_000_000;

    private int inFlight() {
        int n = 0;
        for (OffloadScheduler s : all) {
            n += s.jobsInFlight();
        }
        return n;
    }

    private void merge(OffloadScheduler source, List<LoadDone> dones, List<LoadDone> out) {
        for (LoadDone d : dones) {
            PendingLoad pl = pending.get(d.requestId());
            if (pl == null) {
                if (source == full) {
                    out.add(d);
                }
                continue;
            }
            if (source == full) {
                pl.full = d;
            } else {
                pl.good[parts.indexOf(source)] = d.goodBlocks();
            }
            if (--pl.remaining == 0) {
                pending.remove(d.requestId());
                out.add(merged(pl));
            }
        }
    }

    /** The request's load in every group ended: the longest prefix every group holds valid. */
    private LoadDone merged(PendingLoad pl) {
        LoadDone f = pl.full;
        int fullEnd = pl.hit + f.goodBlocks();
        int m = fullEnd;
        while (m > pl.hit && !windowsValid(pl, m)) {
            m--;
        }
        if (m == fullEnd && m == pl.end) {
            return f;
        }
        Map<String, Integer> lost = new TreeMap<>(f.lostTokensByTier());
        int extra = (fullEnd - m) * blockSize;
        if (extra > 0) {
            // Group 0 loaded these, a window group did not: not a hit after all (attributed to the load's tier).
            lost.merge(f.tier(), extra, Integer::sum);
            OffloadStats.add(full.stats().externalHitTokens, f.tier(), -extra);
        }
        for (OffloadScheduler s : all) {
            s.stores().cutCursor(f.requestId(), m);
        }
        return new LoadDone(f.requestId(), f.tier(), pl.hit, pl.end - pl.hit, m - pl.hit, lost);
    }

    /** Whether every window group holds, at a hit of {@code m} blocks, its window: on the device below the hit, loaded above. */
    private boolean windowsValid(PendingLoad pl, int m) {
        for (int i = 0; i < parts.size(); i++) {
            int need = Math.max(parts.get(i).group().firstReadBlock(m * blockSize, blockSize), pl.hit);
            if (need < m && (pl.from[i] > need || m > pl.from[i] + pl.good[i])) {
                return false;
            }
        }
        return true;
    }

    boolean hasJobs(long requestId) {
        for (OffloadScheduler p : parts) {
            if (p.jobs().hasJobs(requestId)) {
                return true;
            }
        }
        return pending.containsKey(requestId);
    }

    boolean busy() {
        for (OffloadScheduler p : parts) {
            if (p.busy()) {
                return true;
            }
        }
        return false;
    }

    void onFinished(long requestId) {
        for (OffloadScheduler p : parts) {
            p.onFinished(requestId);
        }
    }

    /**
     * Resets every window group's tiers; returns, as abandoned, the loads whose group 0 part ended
     * while a window group's still ran (group 0's scheduler reports the ones still running itself).
     */
    List<LoadDone> resetCache() {
        List<LoadDone> abandoned = new ArrayList<>();
        for (PendingLoad pl : pending.values()) {
            LoadDone f = pl.full;
            if (f != null) {
                Map<String, Integer> lost = new TreeMap<>(f.lostTokensByTier());
                lost.merge(f.tier(), f.goodBlocks() * blockSize, Integer::sum);
                OffloadStats.add(full.stats().externalHitTokens, f.tier(), -(long) f.goodBlocks() * blockSize);
                abandoned.add(new LoadDone(f.requestId(), f.tier(), pl.hit, pl.end - pl.hit, 0, lost));
            }
        }
        pending.clear();
        for (OffloadScheduler p : parts) {
            p.resetCache();
        }
        return abandoned;
    }
}
