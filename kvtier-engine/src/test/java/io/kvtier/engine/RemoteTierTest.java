package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.remote.OwnCluster;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RedisServers;
import io.kvtier.tier.remote.RemoteSettings;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two engines with their own host tiers share one Redis: engine A stores the reference prompts,
 * engine B (empty host tier) gets remote hits for every shared full chunk and reproduces every
 * reference record, on standalone Redis and on a cluster. Faults on a private server end with the
 * reference outputs, the right counter, no exception and no hang.
 */
class RemoteTierTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();
    /** Records whose prompts have at least one full 16-token block before their last token. */
    private static final int[] LONG_PROMPTS = {3, 4, 5, 7};

    @TempDir
    Path dir;

    private final String tenant = "t" + Long.toHexString(new Random().nextLong() & 0xffffffL);
    private final List<String> warnings = new CopyOnWriteArrayList<>();

    private OffloadSetup setup(RemoteSettings s) {
        return new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
    }

    private RemoteSettings settings(List<String> urls, boolean cluster) {
        // A generous timeout: the hits asserted here must not depend on the machine's load.
        return RemoteSettings.of(urls, cluster, tenant, null).withTimeout(Duration.ofSeconds(5));
    }

    private static Engine engine(OffloadSetup setup) {
        return LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 1024 / 16 * 2),
                Kernels.best(), 2, setup);
    }

    private static int[] all() {
        return new int[] {0, 1, 2, 3, 4, 5, 6, 7};
    }

    /** Runs the records one after another, the device cache dropped between them; checks every output. */
    private static List<Request> runSequential(Engine e, int... records) {
        return SequentialRuns.run(e, records);
    }

    private static int remoteHits(Request r) {
        return r.externalHitTokens().getOrDefault("remote", 0);
    }

    private void shareOneStore(List<String> urls, boolean cluster) {
        try (Engine a = engine(setup(settings(urls, cluster)))) {
            runSequential(a, all());
            assertThat(a.offload().stats().blocksStored().get("remote")).isPositive();
            assertThat(a.offload().remoteStats().writes()).isPositive();
            assertThat(a.offload().remoteStats().storesDropped()).isZero();
        }
        try (Engine b = engine(setup(settings(urls, cluster)))) {
            List<Request> done = runSequential(b, all());
            for (int i : LONG_PROMPTS) {
                Request r = done.get(i);
                int hit = r.externalHitTokens().values().stream().mapToInt(Integer::intValue).sum();
                assertThat(hit).as("record %d: every full block before its last token", i)
                        .isEqualTo((r.promptLength() - 1) / 16 * 16);
            }
            assertThat(remoteHits(done.get(3))).isEqualTo(32);
            assertThat(remoteHits(done.get(7))).isEqualTo(224);
            assertThat(b.offload().stats().loadFailures()).isZero();
            assertThat(b.offload().remoteStats().chunksLoaded()).isPositive();
            assertThat(b.offload().remoteStats().breakerState()).isEqualTo("closed");
        }
        assertThat(warnings).isEmpty();
    }

    @Test
    void twoEnginesShareStandaloneRedis() {
        shareOneStore(List.of(RedisServers.standalone()), false);
    }

    /** trial10: a value limit below the chunk size counted one failure per write job and said nothing before the summary. */
    @Test
    void aValueLimitBelowTheChunkSizeCountsEveryChunkAndSaysSoOnce() {
        RemoteSettings s = settings(List.of(RedisServers.standalone()), false).withMaxValueBytes(1024);
        try (Engine e = engine(setup(s))) {
            runSequential(e, all());
            long hostChunks = e.offload().stats().blocksStored().get("host") / OffloadConfig.DEFAULT.blocksPerChunk();
            assertThat(e.offload().remoteStats().storeFailures()).isEqualTo(Map.of("oversize", hostChunks));
            // A new user's trial: "0 chunks stored in 1 write job", with no SET sent.
            assertThat(e.offload().remoteStats().writes()).as("write jobs that sent a SET").isZero();
            assertThat(e.offload().remoteStats().chunksStored()).isZero();
        }
        assertThat(warnings).singleElement().asString().startsWith("remote tier: a chunk's value is ")
                .contains(" bytes, above the store's limit of 1024 bytes");
    }

    @Test
    void aRemoteHitLongerThanTheHostTierPromotesItsFittingPrefixAndCountsTheRest() {
        List<String> urls = List.of(RedisServers.standalone());
        try (Engine a = engine(setup(settings(urls, false)))) {
            runSequential(a, 7);
            assertThat(a.offload().stats().blocksStored().get("remote")).isGreaterThanOrEqualTo(14L); // decode blocks too
        }
        OffloadSetup fourChunks = new OffloadSetup(0, 4, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(settings(urls, false), DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
        try (Engine b = engine(fourChunks)) {
            Request r = runSequential(b, 7).get(0);
            // The host tier holds 4 of the 14 chunks: those are promoted and loaded, the other 10 recomputed.
            assertThat(r.externalHitTokens()).isEqualTo(java.util.Map.of("remote", 64));
            assertThat(b.offload().stats().blocksNotStored()).containsEntry(OffloadStats.REMOTE_NOT_PROMOTED, 10L);
            assertThat(b.offload().remoteStats().chunksLoaded()).isEqualTo(4);
            assertThat(b.offload().stats().loadFailures()).isZero();
        }
        assertThat(warnings).isEmpty();
    }

    @Test
    void twoEnginesShareARedisCluster() {
        shareOneStore(RedisServers.cluster(), true);
    }

    @Test
    void anEngineStartsAndServesWithTheStoreDownThenUsesItWhenItComesBack() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"))) {
            RemoteSettings s = settings(List.of(redis.url()), false).withTimeout(Duration.ofSeconds(1))
                    .withBreakerOpen(Duration.ofMillis(100));
            redis.kill();
            try (Engine e = engine(setup(s))) {
                runSequential(e, all());
                assertThat(e.offload().stats().blocksStored().get("remote")).isNull();
                assertThat(e.offload().remoteStats().storesDropped()).isPositive();
                assertThat(e.offload().remoteStats().breakerState()).isEqualTo("open");
                assertThat(warnings).as("one line at start names the store it cannot reach").hasSize(1);
                // The cause once, without the client's wrappers and its "127.0.0.1/<unresolved>:port".
                assertThat(warnings.get(0)).isEqualTo("remote tier: cannot reach " + redis.url()
                        + " (connection refused); every lookup misses until it answers");
                redis.restart();
                // The store reconnects in the background once the breaker lets a trial through.
                for (int round = 0; round < 50 && e.offload().stats().blocksStored().get("remote") == null; round++) {
                    Thread.sleep(50);
                    e.resetCache(); // the host tier forgets, so its stores (and remote writes) happen again
                    runSequential(e, 7);
                }
                assertThat(e.offload().stats().blocksStored().get("remote")).isPositive();
                assertThat(e.offload().remoteStats().breakerState()).isEqualTo("closed");
                // trial 10 #6: "until it answers" is followed by the line saying it does.
                assertThat(warnings).hasSize(2);
                assertThat(warnings.get(1)).isEqualTo("remote tier: " + redis.url() + " answered; lookups use it from now");
            }
        }
    }

    @Test
    void aServerKilledMidRunCostsMissesOnly() throws Exception {
        String url;
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"))) {
            url = redis.url();
            RemoteSettings s = settings(List.of(redis.url()), false).withTimeout(Duration.ofSeconds(2))
                    .withBreakerOpen(Duration.ofSeconds(30));
            try (Engine a = engine(setup(s))) {
                runSequential(a, all());
            }
            try (Engine b = engine(setup(s))) {
                assertThat(remoteHits(runSequential(b, 3).get(0))).isEqualTo(32);
                redis.kill();
                List<Request> after = runSequential(b, 4, 5, 6, 7);
                assertThat(remoteHits(after.get(3))).isZero();
                assertThat(b.offload().remoteStats().breakerOpens()).isPositive();
                assertThat(b.offload().remoteStats().breakerState()).isEqualTo("open");
                // A closed connection is the store being unavailable, not an error of the server.
                assertThat(b.offload().remoteStats().storeFailures().keySet()).isSubsetOf("unavailable", "timeout");
                assertThat(b.offload().remoteStats().loadFailures().keySet()).isSubsetOf("unavailable", "timeout");
            }
        }
        // One line as the store went away (the breaker stays open 30 s: it never answers again here).
        assertThat(warnings).singleElement().asString().startsWith("remote tier: " + url + " stopped answering (")
                .endsWith("(tried again every 30000 ms)");
    }

    @Test
    void aFrozenServerCostsMissesWithinItsTimeoutAndIsUsedAgainAfterItThaws() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"))) {
            RemoteSettings s = settings(List.of(redis.url()), false).withTimeout(Duration.ofSeconds(1))
                    .withBreakerOpen(Duration.ofMillis(200));
            try (Engine a = engine(setup(s))) {
                runSequential(a, all());
            }
            try (Engine b = engine(setup(s))) {
                redis.freeze();
                List<Request> frozen = runSequential(b, 3, 7);
                assertThat(remoteHits(frozen.get(1))).isZero();
                assertThat(b.offload().remoteStats().breakerOpens()).isPositive();
                // The probes got no answer: counted as such, not as chunks found absent.
                assertThat(b.offload().remoteStats().probeFailures()).isNotEmpty();
                assertThat(b.offload().remoteStats().probeFailures().keySet()).isSubsetOf("timeout", "unavailable");
                assertThat(b.offload().remoteStats().chunksProbedPresent()).isZero();
                redis.thaw();
            }
            try (Engine c = engine(setup(s))) {
                assertThat(remoteHits(runSequential(c, 7).get(0))).isEqualTo(224);
            }
        }
    }

    @Test
    void aWrongPasswordTurnsTheTierOffWithOneLine() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"), "requirepass right-secret")) {
            RemoteSettings s = RemoteSettings.of(List.of(redis.url()), false, tenant, "wrong-secret").withTimeout(Duration.ofSeconds(5));
            try (Engine e = engine(setup(s))) {
                runSequential(e, all());
                assertThat(e.offload().remoteStats().breakerState()).isEqualTo("off");
                assertThat(e.offload().remoteStats().offReason()).startsWith("authentication failed (WRONGPASS ");
                assertThat(e.offload().remoteStats().breakerOpens()).isZero();
            }
        }
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0)).startsWith("remote tier off: authentication failed").doesNotContain("secret");
    }

    @Test
    void anAclThatRefusesTheKeysTurnsTheTierOffWithOneLine() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"), "user alice on >alice-pw ~other:* +@all")) {
            RemoteSettings s = RemoteSettings.of(List.of("redis://alice@127.0.0.1:" + redis.port()), false, tenant, "alice-pw")
                    .withTimeout(Duration.ofSeconds(5));
            try (Engine e = engine(setup(s))) {
                // Said while the engine was built, before its first step: a new user's trial had the line in the
                // middle of generate's streamed answer.
                assertThat(warnings).as("before any request").singleElement().asString()
                        .startsWith("remote tier off: the server refused key kvt:v1:" + tenant);
                runSequential(e, all());
                assertThat(e.offload().remoteStats().breakerState()).isEqualTo("off");
            }
        }
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0)).startsWith("remote tier off: the server refused key kvt:v1:" + tenant)
                .contains("NOPERM").doesNotContain("alice-pw");
    }

    /** The server's {@code INFO} field {@code name} (a number). */
    private static long info(OwnRedis redis, String section, String name) throws Exception {
        for (String line : redis.cli("info", section).split("\\R")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError("INFO " + section + " has no " + name);
    }

    @Test
    void aTinyMaxmemoryTurnsEvictionsIntoMisses() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"), "maxmemory-policy allkeys-lru")) {
            // Room for a few chunks above what the empty server uses itself (a fixed "1mb" can be
            // below that baseline, and then every SET is refused with OOM instead of evicting).
            long valueBytes;
            try (Checkpoint model = Checkpoint.load(ReferenceRecords.model())) {
                valueBytes = 16L * 2 * model.config().layers() * model.config().kvDim() * Float.BYTES; // a chunk's payload
            }
            redis.cli("config", "set", "maxmemory", String.valueOf(info(redis, "memory", "used_memory") + 12 * valueBytes));
            RemoteSettings s = settings(List.of(redis.url()), false);
            long stored;
            try (Engine a = engine(setup(s))) {
                runSequential(a, all());
                stored = a.offload().remoteStats().chunksStored();
                assertThat(a.offload().remoteStats().storeFailures()).as("evicted, never refused").isEmpty();
            }
            long kept = Long.parseLong(redis.cli("dbsize"));
            assertThat(kept).as("the server evicted").isLessThan(stored);
            assertThat(info(redis, "stats", "evicted_keys")).isPositive();
            // Engine B writes nothing (on-evict, and its host tier never evicts): what it finds is what A left.
            OffloadSetup readOnly = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                    new OffloadSetup.RemoteSetup(s, DiskWritePolicy.ON_EVICT, 1, 64L << 20, warnings::add));
            try (Engine b = engine(readOnly)) {
                List<Request> done = runSequential(b, all());
                long hitChunks = done.stream().mapToLong(r -> remoteHits(r) / 16).sum();
                assertThat(b.offload().remoteStats().chunksLoaded()).isEqualTo(hitChunks).isLessThanOrEqualTo(kept);
                assertThat(b.offload().remoteStats().chunksStored()).isZero();
                // A chunk the server evicts between probe and read (a GET's reply counts against
                // maxmemory too) is a miss; nothing else may fail.
                assertThat(b.offload().remoteStats().loadFailures().keySet()).isSubsetOf("miss");
                // Chunks found absent are answers: no probe failed.
                assertThat(b.offload().remoteStats().probeFailures()).isEmpty();
                assertThat(done.get(7).externalHitTokens().getOrDefault("remote", 0)).as("record 7 lost chunks to eviction")
                        .isLessThan(224);
            }
        }
        assertThat(warnings).isEmpty();
    }

    /**
     * Record 7's chunk keys in the store, in prompt order, each with the master holding it: read
     * from the masters themselves (KEYS is per node), the chain followed from the namespace through
     * the values' headers (parent and token ids).
     */
    private static List<Map.Entry<String, OwnRedis>> chainOfRecord7(List<OwnRedis> masters, String tenant) {
        Map<BlockKey, List<ChunkHeader>> children = new HashMap<>();
        Map<BlockKey, Map.Entry<String, OwnRedis>> where = new HashMap<>();
        BlockKey namespace = null;
        for (OwnRedis m : masters) {
            RedisClient client = RedisClient.create(m.url());
            try (StatefulRedisConnection<String, byte[]> c = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE))) {
                for (String k : c.sync().keys("kvt:v1:" + tenant + ":*")) {
                    ChunkHeader h = ChunkHeader.readFrom(MemorySegment.ofArray(c.sync().get(k)), 0);
                    children.computeIfAbsent(h.parent(), p -> new ArrayList<>()).add(h);
                    where.put(h.key(), Map.entry(k, m));
                    namespace = h.namespace();
                }
            } finally {
                client.shutdown();
            }
        }
        int[] prompt = RECORDS.get(7).promptIds();
        List<Map.Entry<String, OwnRedis>> chain = new ArrayList<>();
        BlockKey at = namespace;
        for (int from = 0; from + 16 < prompt.length; from += 16) {
            int[] tokens = Arrays.copyOfRange(prompt, from, from + 16);
            ChunkHeader next = children.getOrDefault(at, List.of()).stream().filter(h -> Arrays.equals(h.tokens(), tokens))
                    .findFirst().orElse(null);
            if (next == null) {
                break;
            }
            chain.add(where.get(next.key()));
            at = next.key();
        }
        return chain;
    }

    @Test
    void aKilledClusterMasterCostsOnlyItsShardAndTheFailoverIsSurvived() throws Exception {
        // A fixed tenant on a fresh cluster: which master holds which chunk is the same every run.
        String failoverTenant = "failover";
        try (OwnCluster cluster = OwnCluster.start(dir.resolve("cluster"))) {
            RemoteSettings s = RemoteSettings.of(cluster.urls(), true, failoverTenant, null).withTimeout(Duration.ofSeconds(2))
                    .withBreakerOpen(Duration.ofMillis(500));
            try (Engine a = engine(setup(s))) {
                runSequential(a, all());
            }
            List<OwnRedis> masters = cluster.masters();
            List<Map.Entry<String, OwnRedis>> chain = chainOfRecord7(masters, failoverTenant);
            assertThat(chain).as("record 7's 14 full chunks are in the store").hasSize(14);
            // The victim: the master whose first chunk of record 7 comes last, so that a hit before it exists.
            OwnRedis victim = null;
            int firstOfVictim = -1;
            for (OwnRedis m : masters) {
                int first = 0;
                while (first < chain.size() && chain.get(first).getValue() != m) {
                    first++;
                }
                if (first > firstOfVictim) {
                    victim = m;
                    firstOfVictim = first;
                }
            }
            assertThat(firstOfVictim).isBetween(1, 13);
            cluster.awaitReplicated(victim);
            try (Engine b = engine(setup(s))) {
                victim.kill(); // its replica may not take over yet: the shard is down while B runs
                Request r7 = runSequential(b, 7).get(0);
                assertThat(remoteHits(r7)).as("the hit is cut at the dead master's first chunk, not before")
                        .isEqualTo(16 * firstOfVictim);
                assertThat(b.offload().remoteStats().breakerState()).isIn("partial", "closed");
                assertThat(b.offload().remoteStats().loadFailures().keySet()).isSubsetOf("unavailable", "timeout");
            }
            cluster.allowFailover();
            cluster.awaitConsistent(); // the replica took over the dead master's slots, and every node says so
            try (Engine c = engine(setup(s))) {
                Request r7 = runSequential(c, 7).get(0);
                assertThat(remoteHits(r7)).as("the promoted replica serves the shard").isEqualTo(224);
                assertThat(c.offload().stats().loadFailures()).isZero();
            }
        }
        // The dead master's breaker opening, said once (engine B's store); nothing else.
        assertThat(OutageLines.assertOnlyOutages(warnings)).isLessThanOrEqualTo(1);
        assertThat(warnings.stream().filter(OutageLines::isDown)).allMatch(w -> w.startsWith("remote tier: cluster node 127.0.0.1:"));
    }
}
