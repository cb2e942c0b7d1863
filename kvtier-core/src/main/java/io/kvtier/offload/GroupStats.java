package io.kvtier.offload;

import java.util.ArrayList;
import java.util.List;

/**
 * The counters of every KV group's offload scheduler, from the one the engine holds (group 0's,
 * {@link OffloadScheduler#windowParts()} the others): what the summary line, {@code /metrics},
 * the stats JSON and {@code bench} report. Each group has its own scheduler and counters
 * (docs/kv-groups.md); {@link OffloadScheduler#stats()} is group 0's alone. For a one-group model
 * the totals are that scheduler's own objects, so its output is what it always was. Engine thread.
 */
public final class GroupStats {

    private GroupStats() {
    }

    /** Whether {@code s} schedules several KV groups (a per-group breakdown says something). */
    public static boolean several(OffloadScheduler s) {
        return !s.windowParts().isEmpty();
    }

    /** Every group's schedulers in group order: {@code s} (group 0) first. */
    public static List<OffloadScheduler> schedulers(OffloadScheduler s) {
        List<OffloadScheduler> all = new ArrayList<>(1 + s.windowParts().size());
        all.add(s);
        all.addAll(s.windowParts());
        return all;
    }

    /** Every group's counters in group order (live objects: read them on the engine thread). */
    public static List<OffloadStats> perGroup(OffloadScheduler s) {
        return schedulers(s).stream().map(OffloadScheduler::stats).toList();
    }

    /** The counters of all groups ({@link OffloadStats#sum}); {@code s.stats()} itself for one group. */
    public static OffloadStats total(OffloadScheduler s) {
        return several(s) ? OffloadStats.sum(perGroup(s)) : s.stats();
    }

    /** Every group's remote counters in group order, or null without a remote tier. */
    public static List<RemoteStats> remotePerGroup(OffloadScheduler s) {
        if (s.remoteStats() == null) {
            return null;
        }
        return schedulers(s).stream().map(OffloadScheduler::remoteStats).toList();
    }

    /** The remote counters of all groups ({@link RemoteStats#sum}), {@code s.remoteStats()} for one group, null without a remote tier. */
    public static RemoteStats remoteTotal(OffloadScheduler s) {
        List<RemoteStats> per = remotePerGroup(s);
        return per == null ? null : several(s) ? RemoteStats.sum(per) : per.getFirst();
    }
}
