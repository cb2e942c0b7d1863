package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The remote tier's gate asks the store about the name its commands use: in a cluster a key's
 * node (and so the breaker that decides) follows the whole name {@code kvt:v1:<tenant>:<ns>:<hex>}.
 * It once asked about the bare chunk hex, which hashes to another node's slot.
 */
class RemoteChainGateTest {

    /** A store that refuses every command and records the names it was asked about (a test fake). */
    private static final class RecordingClosedStore implements RemoteStore {
        final List<String> asked = new ArrayList<>();

        @Override public boolean allows(String key) {
            asked.add(key);
            return false;
        }
        @Override public CompletableFuture<byte[]> get(String key) { throw new AssertionError("no command when refused"); }
        @Override public CompletableFuture<Void> set(String key, byte[] value) { throw new AssertionError("no command when refused"); }
        @Override public CompletableFuture<Boolean> touch(String key) { throw new AssertionError("no command when refused"); }
        @Override public void delete(String key) { throw new AssertionError("no command when refused"); }
        @Override public long maxValueBytes() { return 1 << 20; }
        @Override public String breakerState() { return "open"; }
        @Override public long breakerOpens() { return 1; }
        @Override public String offReason() { return null; }
        @Override public void close() { }
    }

    @Test
    void theGateAsksAboutTheNameTheCommandsUse() {
        BlockKey namespace = new BlockKey(7, 7, 7, 7);
        RemoteKeys names = new RemoteKeys("tenant-a", namespace);
        RecordingClosedStore store = new RecordingClosedStore();
        RemoteTierParts parts = new RemoteTierParts(store, names, DiskWritePolicy.THROUGH, 1, 1 << 20,
                Duration.ofMillis(250), Duration.ofSeconds(2));
        BlockKey chunk = new BlockKey(0x1234, 0x5678, 0x9abc, 0xdef0);
        try (HostTier host = new HostTier(4, 1024, 16, CachePolicy.named("lru", 4), KvEvents.discarding())) {
            RemoteChain chain = new RemoteChain(parts, host, null, new JobRegistry(), new OffloadStats(), 1, 1024, 16, namespace);
            assertThat(chain.lookup(List.of(chunk), 0)).as("a refusing store: no remote hit").isZero();
        }
        assertThat(store.asked).containsExactly(names.of(chunk));
        assertThat(store.asked.getFirst()).startsWith("kvt:v1:tenant-a:").endsWith(":" + chunk);
    }
}
