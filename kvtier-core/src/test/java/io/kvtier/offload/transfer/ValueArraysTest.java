package io.kvtier.offload.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.RemoteKeys;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Store values' arrays are reused only after their SET was answered: never one a failed SET was
 * given (the client may still hold it), and the pool keeps at most its bytes.
 */
class ValueArraysTest {

    @Test
    void anArrayGivenBackIsTakenAgainAndTheBoundHolds() {
        ValueArrays pool = new ValueArrays(100);
        byte[] a = pool.take(40);
        byte[] b = pool.take(40);
        assertThat(a).isNotSameAs(b).hasSize(40);
        pool.give(a);
        pool.give(b);
        assertThat(pool.pooledBytes()).isEqualTo(80);
        pool.give(new byte[40]);  // 120 > 100: not kept
        assertThat(pool.pooledBytes()).isEqualTo(80);
        assertThat(pool.take(40)).isSameAs(a);
        assertThat(pool.take(30)).as("another length: a new array, the pooled one dropped").hasSize(30).isNotSameAs(b);
        assertThat(pool.pooledBytes()).isZero();
    }

    @Test
    void aWriteJobReusesTheArraysOfAnsweredSetsAndNeverThoseOfFailedOnes() {
        int tokens = 16;
        long payload = 4096;
        BlockKey ns = new BlockKey(1, 2, 3, 4);
        FakeHeldStore store = new FakeHeldStore();
        try (HostSlab slab = new HostSlab(8, payload, tokens)) {
            RemoteCopier copier = new RemoteCopier(slab, store, new RemoteKeys("t", ns), payload);
            List<ChunkCopy> chunks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                BlockKey key = new BlockKey(i, i, i, i);
                int[] t = new int[tokens];
                Arrays.fill(t, i);
                MemorySegment p = slab.payloadOf(i, payload);
                p.fill((byte) i);
                ChunkHeader.of(ns, key, ns, t, payload, ChunkHeader.crc32c(p)).writeTo(slab.headerOf(i), 0);
                chunks.add(new ChunkCopy(new int[] {-1}, i, ns, key, ns, t));
            }
            assertThat(write(copier, chunks, 1).success()).isTrue();
            Set<byte[]> first = identities(store.setArrays);
            store.setArrays.clear();
            assertThat(write(copier, chunks, 2).success()).isTrue();
            assertThat(identities(store.setArrays)).as("the second job's values reuse the first job's arrays").isEqualTo(first);

            store.setArrays.clear();
            store.failSets = true;
            assertThat(write(copier, chunks, 3).success()).isFalse();
            Set<byte[]> refused = identities(store.setArrays);
            assertThat(refused).hasSize(4);
            store.setArrays.clear();
            store.failSets = false;
            assertThat(write(copier, chunks, 4).success()).isTrue();
            Set<byte[]> after = identities(store.setArrays);
            after.retainAll(refused);
            assertThat(after).as("no array of a failed SET is used again").isEmpty();
            for (int i = 0; i < 4; i++) {
                byte[] v = store.stored(new RemoteKeys("t", ns).of(chunks.get(i).key()));
                assertThat(v[v.length - 1]).as("chunk %d's value holds its own payload", i).isEqualTo((byte) i);
            }
        }
    }

    /** A slot whose bytes no longer match its header (its payload changed) is never sent: the copy is what is checked. */
    @Test
    void aSlotThatDoesNotHoldItsChunkIsNotSent() {
        int tokens = 16;
        long payload = 4096;
        BlockKey ns = new BlockKey(1, 2, 3, 4);
        FakeHeldStore store = new FakeHeldStore();
        try (HostSlab slab = new HostSlab(2, payload, tokens)) {
            RemoteCopier copier = new RemoteCopier(slab, store, new RemoteKeys("t", ns), payload);
            BlockKey key = new BlockKey(9, 9, 9, 9);
            int[] t = new int[tokens];
            MemorySegment p = slab.payloadOf(0, payload);
            p.fill((byte) 5);
            ChunkHeader.of(ns, key, ns, t, payload, ChunkHeader.crc32c(p)).writeTo(slab.headerOf(0), 0);
            p.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 1000, (byte) 6);   // overwritten after its header was made
            TransferResult r = write(copier, List.of(new ChunkCopy(new int[] {-1}, 0, ns, key, ns, t)), 1);
            assertThat(r.success()).isFalse();
            assertThat(r.error()).isEqualTo("error: host slot 0 does not hold chunk " + key.shortHex());
            assertThat(store.setArrays).as("nothing was sent").isEmpty();
            assertThat(store.stored(new RemoteKeys("t", ns).of(key))).isNull();
        }
    }

    private static TransferResult write(RemoteCopier copier, List<ChunkCopy> chunks, long id) {
        return copier.run(new RemoteJob(id, RemoteJob.Kind.WRITE, chunks, System.nanoTime() + 5_000_000_000L), RemoteCopier.FREE);
    }

    private static Set<byte[]> identities(List<byte[]> arrays) {
        Set<byte[]> s = Collections.newSetFromMap(new IdentityHashMap<>());
        synchronized (arrays) {
            s.addAll(arrays);
        }
        return s;
    }
}
