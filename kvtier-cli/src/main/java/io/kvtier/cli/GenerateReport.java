package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineStats;
import io.kvtier.offload.GroupStats;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.RemoteStats;
import io.kvtier.text.Counts;
import io.kvtier.text.Plural;
import io.kvtier.tier.TierIndex;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The summary of a {@code generate} run: on stderr, and as JSON ({@code --stats-json}). */
final class GenerateReport {

    private final Engine engine;
    private final RunTimes times;
    private final GenerateRun.Outcome outcome;
    private final MemoryUse memory;

    GenerateReport(Engine engine, RunTimes times, GenerateRun.Outcome outcome, MemoryUse memory) {
        this.engine = engine;
        this.times = times;
        this.outcome = outcome;
        this.memory = memory;
    }

    Map<String, Object> stats() {
        EngineStats s = engine.stats();
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("requests", s.requests());
        o.put("prompt_tokens", s.promptTokens());
        o.put("generated_tokens", s.generatedTokens());
        o.put("device_hit_tokens", s.deviceHitTokens());
        o.put("computed_tokens", s.computedTokens());
        o.put("preemptions", s.preemptions());
        o.put("steps", s.steps());
        o.put("wall_seconds", round(times.wall()));
        o.put("decode_tokens_per_second", round(times.wall() > 0 ? s.generatedTokens() / times.wall() : 0));
        o.put("startup_seconds", round(times.startup()));
        o.put("tokenize_seconds", round(times.tokenize()));
        o.put("first_token_seconds", round(times.firstToken()));
        o.put("total_seconds", round(times.total()));
        o.put("interrupted", outcome.end() != GenerateRun.End.COMPLETED);
        o.put("finished_requests", outcome.finished().size());
        o.put("unfinished_requests", outcome.unfinished());
        o.put("device_blocks_total", engine.pool().numBlocks());
        o.put("device_blocks_free_at_end", engine.pool().emptyCount());
        o.put("device_blocks_cached_at_end", engine.pool().cachedCount());
        o.put("block_size", engine.config().blockSize());
        OffloadScheduler off = engine.offload();
        OffloadStats os = off == null ? null : GroupStats.total(off); // every KV group's blocks and bytes
        List<String> tiers = tiers(off);
        // Hits of first admissions (the sum of the jsonl lines'); reloads after preemptions are in blocks_loaded.
        o.put("external_hit_tokens", os == null ? Map.of() : OffloadStats.everyKey(tiers, s.externalHitTokensByTier()));
        o.put("blocks_stored", os == null ? Map.of() : OffloadStats.everyKey(tiers, os.blocksStored()));
        o.put("blocks_loaded", os == null ? Map.of() : OffloadStats.everyKey(tiers, os.blocksLoaded()));
        o.put("bytes_stored", os == null ? 0 : os.bytesStored());
        o.put("bytes_loaded", os == null ? 0 : os.bytesLoaded());
        o.put("load_failures", os == null ? 0 : os.loadFailures());
        o.put("store_failures", os == null ? 0 : os.storeFailures());
        o.put("store_refusals", os == null ? 0 : os.storeRefusals());
        o.put("blocks_not_stored", os == null ? Map.of() : OffloadStats.everyKey(OffloadStats.NOT_STORED_REASONS,
                os.blocksNotStored()));
        if (os != null && off.config().loadPolicy() != io.kvtier.offload.LoadPolicy.ALWAYS) {
            o.put("load_decisions", io.kvtier.replay.ReplayReport.loadDecisionsJson(os.loadDecisions())); // --load-policy faster: decisions and their inputs
        }
        List<OffloadScheduler> groups = off == null ? List.of() : GroupStats.schedulers(off);
        o.put("host_chunks_total", groups.stream().mapToLong(g -> g.host().capacity()).sum());
        o.put("host_chunks_used", groups.stream().mapToLong(g -> g.host().capacity() - g.host().index().freeSlots()).sum());
        List<TierIndex> disks = groups.stream().map(OffloadScheduler::diskIndex).filter(d -> d != null).toList();
        o.put("disk_chunks_total", disks.stream().mapToLong(TierIndex::capacity).sum());
        o.put("disk_chunks_used", disks.stream().mapToLong(d -> d.capacity() - d.freeSlots()).sum());
        RemoteStats rs = off == null ? null : GroupStats.remoteTotal(off);
        if (rs != null) {
            o.put("remote", remote(rs));
        }
        if (off != null && GroupStats.several(off)) {
            o.put("groups", perGroup(groups, tiers));
        }
        o.put("memory", memory.json());
        return o;
    }

    /**
     * The tiers of the run, each a key of every per-tier map (0 when nothing moved): {@code host},
     * then {@code disk} and {@code remote} where a KV group has them; none without offloading.
     */
    private static List<String> tiers(OffloadScheduler off) {
        if (off == null) {
            return List.of();
        }
        List<OffloadScheduler> groups = GroupStats.schedulers(off);
        List<String> tiers = new ArrayList<>(List.of(io.kvtier.tier.HostTier.NAME));
        if (groups.stream().anyMatch(g -> g.diskIndex() != null)) {
            tiers.add("disk");
        }
        if (GroupStats.remoteTotal(off) != null) {
            tiers.add("remote");
        }
        return tiers;
    }

    /**
     * Each KV group's offload counters (a model with several groups only): its blocks and bytes
     * stored and loaded per tier, the window blocks it skipped, its tiers' chunks, its remote counters.
     */
    private List<Map<String, Object>> perGroup(List<OffloadScheduler> groups, List<String> tiers) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            OffloadScheduler s = groups.get(g);
            OffloadStats st = s.stats();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("group", g);
            m.put("window", engine.kvCacheManager().groups().get(g).window());
            m.put("blocks_stored", OffloadStats.everyKey(tiers, st.blocksStored()));
            m.put("blocks_loaded", OffloadStats.everyKey(tiers, st.blocksLoaded()));
            m.put("bytes_stored", st.bytesStored());
            m.put("bytes_loaded", st.bytesLoaded());
            m.put("window_blocks_skipped", st.windowBlocksSkipped());
            m.put("load_failures", st.loadFailures());
            m.put("host_chunks_used", s.host().capacity() - s.host().index().freeSlots());
            m.put("host_chunks_total", s.host().capacity());
            if (s.remoteStats() != null) {
                m.put("remote", remote(s.remoteStats()));
            }
            out.add(m);
        }
        return out;
    }

    private static Map<String, Object> remote(RemoteStats rs) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("chunks_stored", rs.chunksStored());
        r.put("chunks_loaded", rs.chunksLoaded());
        r.put("probes", rs.probes());
        r.put("chunks_probed_present", rs.chunksProbedPresent());
        r.put("probe_failures", OffloadStats.everyKey(RemoteStats.PROBE_FAILURE_CAUSES, rs.probeFailures()));
        r.put("writes", rs.writes());
        r.put("stores_dropped", rs.storesDropped());
        r.put("stores_dropped_by", OffloadStats.everyKey(RemoteStats.DROP_REASONS, rs.storesDroppedBy()));
        r.put("load_failures", OffloadStats.everyKey(RemoteStats.LOAD_FAILURE_CAUSES, rs.loadFailures()));
        r.put("store_failures", OffloadStats.everyKey(RemoteStats.STORE_FAILURE_CAUSES, rs.storeFailures()));
        r.put("breaker_state", rs.breakerState());
        r.put("breaker_opens", rs.breakerOpens());
        r.put("off_reason", rs.offReason());
        return r;
    }

    /**
     * The summary lines; {@code diskRoomNote} follows the disk tiers' capacity in chunks
     * ({@link DiskOptions#roomNote(Engine)}).
     */
    void writeSummary(PrintStream err, String diskRoomNote) {
        Map<String, Object> s = stats();
        if (outcome.end() == GenerateRun.End.SIGNALLED) {
            err.printf("kvtier: stopped by a signal: %d of %s finished and printed, %d not%n",
                    outcome.finished().size(), Plural.count(outcome.finished().size() + outcome.unfinished(), "prompt"),
                    outcome.unfinished());
        }
        if (engine.offload() != null) {
            err.printf("kvtier: offload: external hit tokens %s, blocks stored %s, loaded %s, %s, "
                            + "%s, %s, host chunks %s used of %s%s%n",
                    counts(s, "external_hit_tokens"), counts(s, "blocks_stored"), counts(s, "blocks_loaded"),
                    count(s, "load_failures", "load failure"), count(s, "store_failures", "store failure"),
                    count(s, "store_refusals", "store refusal"), s.get("host_chunks_used"), s.get("host_chunks_total"),
                    engine.offload().diskIndex() == null ? "" : ", disk chunks " + s.get("disk_chunks_used") + " used of "
                            + s.get("disk_chunks_total") + diskRoomNote);
            String notStored = counts(s, "blocks_not_stored");
            if (!notStored.equals("none")) {
                err.printf("kvtier: offload: blocks not stored, by reason: %s%n", notStored);
            }
            if (s.get("groups") instanceof List<?> groups) {
                for (Object o : groups) {
                    Map<?, ?> g = (Map<?, ?>) o;
                    err.printf("kvtier: offload: KV group %s (%s): blocks stored %s, loaded %s, bytes stored %s, loaded %s, "
                                    + "%s skipped, host chunks %s used of %s%n",
                            g.get("group"), (int) g.get("window") == 0 ? "full attention" : "window " + g.get("window"),
                            counts(g, "blocks_stored"), counts(g, "blocks_loaded"), g.get("bytes_stored"), g.get("bytes_loaded"),
                            count(g, "window_blocks_skipped", "window block"), g.get("host_chunks_used"), g.get("host_chunks_total"));
                }
            }
            if (s.get("remote") instanceof Map<?, ?> r) {
                long dropped = ((Number) r.get("stores_dropped")).longValue();
                String unanswered = counts(r, "probe_failures");
                err.printf("kvtier: remote: %s stored in %s, %s loaded, %s found %s present%s, %s dropped%s, "
                                + "load failures %s, store failures %s, %s%n",
                        count(r, "chunks_stored", "chunk"), Plural.count(((Number) r.get("writes")).longValue(), "write job"),
                        r.get("chunks_loaded"), Plural.count(((Number) r.get("probes")).longValue(), "probe"),
                        Plural.count(((Number) r.get("chunks_probed_present")).longValue(), "chunk"),
                        "none".equals(unanswered) ? "" : " (unanswered: " + unanswered + ")", Plural.count(dropped, "store"),
                        dropped == 0 ? "" : " (" + counts(r, "stores_dropped_by") + ")", counts(r, "load_failures"),
                        counts(r, "store_failures"),
                        breaker((String) r.get("breaker_state"), ((Number) r.get("breaker_opens")).longValue(),
                                (String) r.get("off_reason")));
            }
        }
        err.printf("kvtier: %s, %s (%s hit on device), %s generated in %.2f s (%s tokens/s), "
                        + "%s, %s, device blocks %s free + %s cached of %s%n",
                Plural.count(((Number) s.get("requests")).longValue(), "request"), count(s, "prompt_tokens", "prompt token"),
                s.get("device_hit_tokens"), s.get("generated_tokens"),
                times.wall(), rate((double) s.get("decode_tokens_per_second")),
                Plural.count(((Number) s.get("steps")).longValue(), "step"),
                Plural.count(((Number) s.get("preemptions")).longValue(), "preemption"),
                s.get("device_blocks_free_at_end"), s.get("device_blocks_cached_at_end"), s.get("device_blocks_total"));
        err.printf("kvtier: %.2f s from process start: ready after %.2f s (tokenizing %.2f s), first token at %s%n",
                times.total(), times.startup(), times.tokenize(),
                times.firstToken() > 0 ? String.format("%.2f s", times.firstToken())
                        : outcome.end() != GenerateRun.End.COMPLETED ? "none"
                        : "none (no request produced a token: a stop token sampled first ends a request without one)");
        err.println("kvtier: " + memory.line());
    }

    /** A count of the record and its noun, as a summary shows it: "1 chunk", "2 chunks" ({@link Plural#count}). */
    private static String count(Map<?, ?> record, String field, String singular) {
        return Plural.count(((Number) record.get(field)).longValue(), singular);
    }

    /** A per-tier or per-reason map of the record, as a summary shows it ({@link Counts#nonZero}). */
    @SuppressWarnings("unchecked")
    private static String counts(Map<?, ?> record, String field) {
        return Counts.nonZero((Map<String, ? extends Number>) record.get(field));
    }

    /** A rate for the summary: whole units, with one decimal below 10 so a slow run never reads "0 tokens/s". */
    static String rate(double perSecond) {
        return String.format(java.util.Locale.ROOT, perSecond < 10 ? "%.1f" : "%.0f", perSecond);
    }

    /** {@link #rate} with thousands separators, for the bench tables ({@code 1,785}, {@code 2.5}). */
    static String groupedRate(double perSecond) {
        return String.format(java.util.Locale.ROOT, perSecond < 10 ? "%.1f" : "%,.0f", perSecond);
    }

    /**
     * The breaker's part of the remote line: its state and how often it opened; for a tier that
     * turned itself off, that and why (the reason's words before its detail: "tier off:
     * authentication failed"), not a breaker state it never reached by failures.
     */
    static String breaker(String state, long opens, String offReason) {
        String opened = opens == 0 ? "" : " (" + (state.equals("off") ? "breaker " : "") + "opened " + Plural.count(opens, "time") + ")";
        if (!state.equals("off")) {
            return "breaker " + state + opened;
        }
        int detail = offReason == null ? -1 : offReason.indexOf(" (");
        return "tier off" + (offReason == null ? "" : ": " + (detail > 0 ? offReason.substring(0, detail) : offReason)) + opened;
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
