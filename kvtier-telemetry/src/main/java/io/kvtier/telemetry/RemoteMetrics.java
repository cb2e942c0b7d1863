package io.kvtier.telemetry;

import io.kvtier.engine.EngineSnapshot;
import io.kvtier.offload.RemoteStats;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The remote tier's own series ({@code kvtier:remote_...}), beside what it shares with the other
 * tiers under their names ({@code kvtier:blocks_stored_total{tier="remote"}},
 * {@code kvtier:external_hit_tokens_total{tier="remote"}}, transfer types {@code CPU_to_REMOTE}
 * and {@code REMOTE_to_CPU}). Read from the snapshot's copy of {@link RemoteStats}; absent
 * series (no remote tier) are simply not written. The failure and drop counters carry every
 * cause and reason from the start, at 0.
 */
final class RemoteMetrics {

    /** The breaker states, one series each (1 for the current one). */
    private static final List<String> BREAKER_STATES = List.of("closed", "partial", "half_open", "open", "off");

    private RemoteMetrics() {
    }

    static void register(ServeMetrics m) {
        m.counter("kvtier:remote_chunks_stored", "Chunks written to the remote store.", s -> value(s, RemoteStats::chunksStored));
        m.counter("kvtier:remote_chunks_loaded", "Chunks read from the remote store, verified, into host slots.",
                s -> value(s, RemoteStats::chunksLoaded));
        m.counter("kvtier:remote_probes", "Probe jobs sent to the remote store (each a pipeline of TOUCH).", s -> value(s, RemoteStats::probes));
        m.labelledCounter("kvtier:remote_probe_failures", "Probe jobs that got no answer for some chunk, per cause (timeout, "
                + "unavailable, error); an absent chunk is an answer.", "cause",
                (s, out) -> each(s, RemoteStats::probeFailures, RemoteStats.PROBE_FAILURE_CAUSES, out));
        m.counter("kvtier:remote_chunks_probed_present", "Chunks a probe found in the remote store.",
                s -> value(s, RemoteStats::chunksProbedPresent));
        m.counter("kvtier:remote_writes", "Write jobs that sent SETs to the remote store (each a pipeline of SET; one that sent none is not counted).", s -> value(s, RemoteStats::writes));
        m.labelledCounter("kvtier:remote_load_failures", "Remote promotions that failed, per cause (miss, timeout, verify, "
                + "unavailable, error).", "cause", (s, out) -> each(s, RemoteStats::loadFailures, RemoteStats.LOAD_FAILURE_CAUSES, out));
        m.labelledCounter("kvtier:remote_store_failures", "Chunks not written to the remote store because their write "
                + "failed, per cause (timeout, oversize, unavailable, error).", "cause", (s, out) -> each(s, RemoteStats::storeFailures, RemoteStats.STORE_FAILURE_CAUSES, out));
        m.labelledCounter("kvtier:remote_stores_dropped", "Chunks not written to the remote store (never waited for), per reason "
                + "(budget, unavailable, slow).", "reason", (s, out) -> each(s, RemoteStats::storesDroppedBy, RemoteStats.DROP_REASONS, out));
        m.counter("kvtier:remote_breaker_opens", "Times the remote tier went from serving to refusing: a node's circuit "
                + "breaker opened, or the store could not be reached at start.", s -> value(s, RemoteStats::breakerOpens));
        m.labelledGauge("kvtier:remote_breaker_state", "1 for the remote tier's breaker state (closed, partial: some nodes open, "
                + "half_open: no node serves, a trial is due or out, open, off: turned off), 0 for the others.", "state", (s, out) -> {
                    RemoteStats r = remote(s);
                    if (r != null) {
                        BREAKER_STATES.forEach(st -> out.accept(st, st.equals(r.breakerState()) ? 1.0 : 0.0));
                    }
                });
        m.gauge("kvtier:remote_bytes_in_flight", "Bytes of values being written to the remote store now.",
                s -> value(s, RemoteStats::bytesInFlight));
        m.gauge("kvtier:remote_write_latency_seconds", "Average latency of the last remote write jobs, "
                + "in seconds; -1 before the first.", s -> remote(s) == null || remote(s).writeLatencyNanos() < 0 ? -1
                : remote(s).writeLatencyNanos() / 1e9);
    }

    private static RemoteStats remote(EngineSnapshot s) {
        return s.offload() == null ? null : s.offload().remote();
    }

    private static double value(EngineSnapshot s, Function<RemoteStats, Long> f) {
        RemoteStats r = remote(s);
        return r == null ? 0 : f.apply(r);
    }

    /**
     * Every label value in {@code known} (0 until its first event, so that a rate or an alert on
     * it works from the start), then any other the map holds.
     */
    private static void each(EngineSnapshot s, Function<RemoteStats, Map<String, Long>> f, List<String> known,
                             BiConsumer<String, Double> out) {
        RemoteStats r = remote(s);
        if (r != null) {
            Map<String, Long> counts = f.apply(r);
            known.forEach(k -> out.accept(k, counts.getOrDefault(k, 0L).doubleValue()));
            counts.forEach((k, n) -> {
                if (!known.contains(k)) {
                    out.accept(k, n.doubleValue());
                }
            });
        }
    }
}
