package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvGroup;
import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.tier.ChunkHeader;
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
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gemma3 fixture (two KV groups: full, and a window of 16) on a real Redis (issue 12): engine A
 * stores both groups' chunks, engine B with an empty host tier gets remote hits in both groups and
 * llama.cpp's greedy tokens; a window group's value corrupted or deleted in the store cuts the hit
 * in both groups to the last boundary every group still serves, with llama.cpp's tokens. Skips
 * without {@code KVTIER_REDIS_URL} (fails under {@code CI=true}).
 *
 * <p>Prefill steps of 48 tokens (3 blocks): the window group stores the last block of every
 * prefill step (blocks 3k+2, still in the next query's window) and the block the prompt ends in,
 * so the long prompt (422 tokens) can hit at blocks 3, 6, ..., 24 and 26.
 */
class Gemma3RemoteTest {

    @TempDir
    Path tmp;

    private final String tenant = "g" + Long.toHexString(new Random().nextLong() & 0xffffffL);
    private final List<String> warnings = new CopyOnWriteArrayList<>();

    private Engine engine(String url) {
        RemoteSettings s = RemoteSettings.of(List.of(url), false, tenant, null).withTimeout(Duration.ofSeconds(5));
        OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, 64L << 20, warnings::add));
        return LlamaRunner.engine(Models.load(Gemma3EngineTest.MODEL, new DigestCache(tmp.resolve("digests"))),
                EngineConfig.of(16, 64).withMaxBatchTokens(48).withStopToken(-1), Kernels.best(), 2, setup);
    }

    /** Every prompt alone, the device prefix cache dropped before each; each gives llama.cpp's tokens. */
    private static List<Request> onePerPass(Engine e, int firstId) {
        List<Request> done = new ArrayList<>();
        for (int i = 0; i < Gemma3EngineTest.REFS.size(); i++) {
            e.resetDevicePrefixCache();
            Request r = new Request(firstId + i, Gemma3EngineTest.REFS.get(i).promptIds(), 32, SamplingParams.GREEDY,
                    ExtraKeys.NONE);
            e.submit(r);
            e.runToCompletion();
            e.drainTransfers();
            assertThat(r.outputIds()).as("prompt %s", Gemma3EngineTest.REFS.get(i).promptKind())
                    .containsExactly(Gemma3EngineTest.REFS.get(i).generatedIds());
            e.checkKvInvariants();
            e.offload().checkInvariants();
            done.add(r);
        }
        return done;
    }

    private static List<Integer> remoteHits(List<Request> done) {
        return done.stream().map(r -> r.externalHitTokens().getOrDefault("remote", 0)).toList();
    }

    private static OffloadScheduler window(Engine e) {
        return e.offload().windowParts().getFirst();
    }

    /**
     * The store key of block {@code block} of the long prompt in KV group {@code group} (each
     * group's chunks carry its own namespace in their header: group 0 the engine's, a window group
     * {@link KvGroup#key} of it).
     */
    private String keyOfLongPromptBlock(StatefulRedisConnection<String, byte[]> c, BlockKey namespace, int block) {
        int[] tokens = Arrays.copyOfRange(Gemma3EngineTest.REFS.get(2).promptIds(), block * 16, block * 16 + 16);
        List<String> found = new ArrayList<>();
        for (String k : c.sync().keys("kvt:v1:" + tenant + ":*")) {
            ChunkHeader h = ChunkHeader.readFrom(MemorySegment.ofArray(c.sync().get(k)), 0);
            if (h.namespace().equals(namespace) && Arrays.equals(h.tokens(), tokens)) {
                found.add(k);
            }
        }
        assertThat(found).as("block %d of the long prompt in namespace %s", block, namespace).hasSize(1);
        return found.getFirst();
    }

    @Test
    void bothGroupsHitTheRemoteTierAndAWindowValueLostCutsTheHitInBoth() {
        String url = RedisServers.standalone();
        BlockKey fullNamespace;
        KvGroup windowGroup;
        try (Engine a = engine(url)) {
            assertThat(a.kvCacheManager().groups()).hasSize(2);
            onePerPass(a, 0);
            assertThat(window(a).remoteStats().chunksStored()).as("window group's chunks written").isPositive();
            assertThat(a.offload().remoteStats().storesDropped() + window(a).remoteStats().storesDropped()).isZero();
            fullNamespace = a.namespaceSeed();
            windowGroup = a.kvCacheManager().groups().get(1);
        }
        // Empty host tiers: every hit comes from the store, in both groups. The short prompt's only
        // full block left the window in its one prefill step: no boundary both groups serve.
        try (Engine b = engine(url)) {
            assertThat(remoteHits(onePerPass(b, 10))).containsExactly(0, 48, 416);
            assertThat(b.offload().remoteStats().chunksLoaded()).as("full group: 3 + 26 chunks").isEqualTo(29);
            assertThat(window(b).remoteStats().chunksLoaded()).as("window group: block 2, block 25").isEqualTo(2);
            assertThat(b.offload().stats().loadFailures() + window(b).stats().loadFailures()).isZero();
        }
        RedisClient client = RedisClient.create(url);
        try (StatefulRedisConnection<String, byte[]> c = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE))) {
            BlockKey windowNamespace = windowGroup.key(fullNamespace);
            // Group 0's block 25 stays intact: only the window group's value is bad.
            keyOfLongPromptBlock(c, fullNamespace, 25);
            String window25 = keyOfLongPromptBlock(c, windowNamespace, 25);
            byte[] value = c.sync().get(window25);
            value[value.length - 1] ^= 0x5a; // the payload's last byte: the header still parses, the checksum fails
            c.sync().set(window25, value);
            try (Engine d = engine(url)) {
                // The hit at 26 needs the window's block 25: cut to 24 (window block 23) in both groups.
                assertThat(remoteHits(onePerPass(d, 20))).containsExactly(0, 48, 384);
                assertThat(window(d).remoteStats().loadFailures()).containsOnlyKeys("verify");
                assertThat(d.offload().remoteStats().loadFailures()).isEmpty();
            }
            // D recomputed blocks 24 and 25 and wrote the window's block 25 through again: delete it.
            c.sync().del(keyOfLongPromptBlock(c, windowNamespace, 25));
            try (Engine e = engine(url)) {
                // A probe finds it absent: the same cut, with no load failing.
                assertThat(remoteHits(onePerPass(e, 30))).containsExactly(0, 48, 384);
                assertThat(window(e).remoteStats().loadFailures()).isEmpty();
                assertThat(window(e).remoteStats().chunksLoaded()).as("window group: block 2, block 23").isEqualTo(2);
            }
        } finally {
            client.shutdown();
        }
        assertThat(warnings).isEmpty();
    }
}
