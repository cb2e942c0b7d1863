package io.kvtier.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Request;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.tier.KvEvents;
import io.kvtier.tier.TierIndex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The events of a real engine, encoded and decoded, tell a router exactly the keys the engine can
 * serve: after each phase the (medium, hash) set rebuilt from the events equals the device prefix
 * cache's keys (GPU) and the host tier's readable chunk keys (CPU), through stores, device
 * evictions (a small pool), a device-only reset and a full reset. In chunk mode the host keys are
 * the chunk keys only.
 */
class EngineKvEventsTest {

    @ParameterizedTest(name = "blocks per chunk {0}")
    @ValueSource(ints = {1, 2})
    void eventsRebuildTheKeysEachTierCanServe(int blocksPerChunk) {
        KvEvents events = KvEvents.buffered();
        // 40 blocks: the reference prompts evict cached device blocks.
        try (Engine e = TestEngines.engine(40, 16L << 20, blocksPerChunk, events)) {
            KvEventEncoder enc = KvEventEncoder.forEngine(e, KvEventEncoder.HashFormat.INT);
            EventWire.State router = new EventWire.State();
            List<Request> all = new ArrayList<>(TestEngines.runRecords(e, 0));
            publish(router, enc, events);
            assertMatches(router, e, all, enc, blocksPerChunk);
            assertThat(router.hashes("GPU")).isNotEmpty();
            assertThat(router.hashes("CPU")).isNotEmpty();

            e.resetDevicePrefixCache();
            publish(router, enc, events);
            assertThat(router.hashes("GPU")).as("after a device-only reset").isEmpty();
            assertMatches(router, e, all, enc, blocksPerChunk);

            all.addAll(TestEngines.runRecords(e, 1000));
            publish(router, enc, events);
            assertMatches(router, e, all, enc, blocksPerChunk);

            e.resetCache();
            publish(router, enc, events);
            assertThat(router.held()).as("after a full reset").isEmpty();
            assertMatches(router, e, all, enc, blocksPerChunk);
        }
    }

    @Test
    void aDeviceEventCarriesTheBlocksTokensAndChainsToItsParent() {
        KvEvents events = KvEvents.buffered();
        try (Engine e = TestEngines.engine(64, 16L << 20, events)) {
            List<Request> done = TestEngines.runRecords(e, 0);
            Request r = done.getFirst();
            var stored = events.drain().stream().filter(ev -> ev instanceof io.kvtier.tier.KvEvent.BlockStored s
                    && s.tier().equals(KvEvents.DEVICE) && s.keys().getFirst().equals(r.blockKeys().getFirst()))
                    .map(ev -> (io.kvtier.tier.KvEvent.BlockStored) ev).findFirst().orElseThrow();
            assertThat(stored.parent()).isEqualTo(e.namespaceSeed());
            int n = stored.keys().size();
            assertThat(stored.keys()).isEqualTo(r.blockKeys().subList(0, n));
            List<Integer> tokens = new ArrayList<>();
            for (int p = 0; p < 16 * n; p++) {
                tokens.add(r.tokenAt(p));
            }
            assertThat(stored.tokenIds()).isEqualTo(tokens);
        }
    }

    private static void publish(EventWire.State router, KvEventEncoder enc, KvEvents events) {
        List<io.kvtier.tier.KvEvent> batch = events.drain();
        if (!batch.isEmpty()) {
            router.apply(router.nextSeq(), enc.encode(System.currentTimeMillis() / 1000.0, batch));
        }
    }

    private static void assertMatches(EventWire.State router, Engine e, List<Request> requests, KvEventEncoder enc, int blocksPerChunk) {
        e.drainTransfers();
        BlockPool pool = e.pool();
        Set<Object> device = new HashSet<>();
        for (int b = 0; b < pool.numBlocks(); b++) {
            if (pool.keyOf(b) != null) {
                device.add(enc.wireHash(pool.keyOf(b)));
            }
        }
        assertThat(router.hashes("GPU")).as("GPU keys").isEqualTo(device);
        TierIndex host = e.offload().host().index();
        Set<Object> readable = new HashSet<>();
        for (Request r : requests) {
            List<BlockKey> keys = r.blockKeys();
            for (int i = blocksPerChunk - 1; i < keys.size(); i += blocksPerChunk) {
                if (host.readable(keys.get(i))) {
                    readable.add(enc.wireHash(keys.get(i)));
                }
            }
        }
        assertThat(router.hashes("CPU")).as("CPU keys").isEqualTo(readable);
        assertThat(readable.size()).as("every readable host entry is a chunk key of a request")
                .isEqualTo(host.capacity() - host.freeSlots());
    }
}
