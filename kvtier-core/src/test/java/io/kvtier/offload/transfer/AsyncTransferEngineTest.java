package io.kvtier.offload.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjIntConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AsyncTransferEngineTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final long seed = System.nanoTime();
    private final TransferFixture fx = new TransferFixture(32, 8, 2, seed);
    private AsyncTransferEngine engine = new AsyncTransferEngine(fx.copier);

    @AfterEach
    void close() {
        engine.close();
        fx.close();
    }

    private long far() {
        return engine.nanoTime() + WAIT.toNanos();
    }

    private TransferResult run(TransferJob job) {
        engine.submit(job);
        List<TransferResult> r = engine.await(List.of(job.jobId()), WAIT);
        assertThat(r).as("seed %d", seed).hasSize(1);
        return r.getFirst();
    }

    /** Stores chunks 0..n-1 from blocks 0.. into slots 0.. and checks the store succeeded. */
    private void storeChain(int n) {
        TransferResult r = run(new StoreJob(1, fx.chain(n, 0, 0), far()));
        assertThat(r.success()).as("seed %d: %s", seed, r).isTrue();
        assertThat(r.bytes()).isEqualTo(n * 2 * fx.bytesPerBlock());
    }

    @Test
    void storeThenLoadRestoresBytesExactly() {
        storeChain(3);
        List<byte[]> original = new ArrayList<>();
        for (int b = 0; b < 6; b++) {
            original.add(fx.blockBytes(b));
        }
        fx.fill(10, 6, (byte) 0x5A);

        TransferResult r = run(new LoadJob(2, fx.chain(3, 0, 10), far()));

        assertThat(r).isEqualTo(TransferResult.ok(2, 6 * fx.bytesPerBlock(), r.nanos()));
        for (int b = 0; b < 6; b++) {
            assertThat(fx.blockBytes(10 + b)).as("seed %d, block %d", seed, b).isEqualTo(original.get(b));
        }
    }

    @Test
    void f02_flippedPayloadByteFailsTheLoadAtThatChunkAndCopiesNothingFromIt() {
        storeChain(3);
        byte[] chunk0block1 = fx.blockBytes(1);
        var p = fx.slab.payloadOf(1);
        p.set(ValueLayout.JAVA_BYTE, 1500, (byte) ~p.get(ValueLayout.JAVA_BYTE, 1500));
        fx.fill(10, 6, (byte) 0x5A);

        TransferResult r = run(new LoadJob(2, fx.chain(3, 0, 10), far()));

        assertThat(r.success()).isFalse();
        assertThat(r.firstFailedChunk()).isEqualTo(1);
        assertThat(r.error()).contains("chunk #1").contains("payload checksum mismatch");
        assertThat(r.bytes()).isEqualTo(2 * fx.bytesPerBlock());
        assertThat(fx.blockBytes(11)).isEqualTo(chunk0block1); // the good prefix was copied
        for (int b = 12; b < 16; b++) {
            assertThat(fx.blockBytes(b)).as("block %d untouched", b).containsOnly((byte) 0x5A);
        }
    }

    @Test
    void f02_truncatedOrForeignHeaderFailsAtTheFirstChunk() {
        storeChain(2);
        fx.slab.headerOf(0).asSlice(100).fill((byte) 0); // truncated header of chunk 0
        fx.fill(10, 4, (byte) 0x5A);
        TransferResult truncated = run(new LoadJob(2, fx.chain(2, 0, 10), far()));
        assertThat(truncated.firstFailedChunk()).isZero();
        assertThat(truncated.error()).contains("chunk header");
        assertThat(fx.blockBytes(10)).containsOnly((byte) 0x5A);
        assertThat(fx.blockBytes(13)).containsOnly((byte) 0x5A);

        ChunkCopy good = fx.chain(2, 0, 10).get(1);
        ChunkCopy foreign = new ChunkCopy(good.deviceBlocks(), good.slot(), new io.kvtier.kv.BlockKey(9, 9, 9, 9),
                good.key(), good.parent(), good.tokens());
        TransferResult r = run(new LoadJob(3, List.of(foreign), far()));
        assertThat(r.error()).contains("namespace");
        assertThat(fx.blockBytes(12)).containsOnly((byte) 0x5A);
    }

    @Test
    void o19_keyCollisionIsDetectedThroughTheTokenIdsInTheHeader() {
        storeChain(1);
        ChunkCopy stored = fx.chain(1, 0, 10).getFirst();
        int[] otherTokens = stored.tokens();
        otherTokens[0] = 32; // a different block that hashed to the same key
        ChunkCopy colliding = new ChunkCopy(stored.deviceBlocks(), stored.slot(), stored.namespace(), stored.key(),
                stored.parent(), otherTokens);
        fx.fill(10, 2, (byte) 0x5A);
        TransferResult r = run(new LoadJob(2, List.of(colliding), far()));
        assertThat(r.firstFailedChunk()).isZero();
        assertThat(r.error()).contains("token id #0");
        assertThat(fx.blockBytes(10)).containsOnly((byte) 0x5A);
    }

    @Test
    void blocksMarkedMinusOneAreVerifiedButNotCopied() {
        storeChain(1);
        byte[] second = fx.blockBytes(1);
        fx.fill(10, 2, (byte) 0x5A);
        TransferResult r = run(new LoadJob(2, List.of(fx.copy(0, 0, -1, 11)), far()));
        assertThat(r.success()).isTrue();
        assertThat(r.bytes()).isEqualTo(fx.bytesPerBlock());
        assertThat(fx.blockBytes(10)).containsOnly((byte) 0x5A);
        assertThat(fx.blockBytes(11)).isEqualTo(second);
    }

    @Test
    void jobsRunInSubmissionOrderPerDirection() {
        storeChain(8);
        Random rnd = new Random(seed);
        java.util.Set<Long> storeIds = new java.util.HashSet<>();
        List<Long> ids = new ArrayList<>();
        for (long id = 10; id < 70; id++) {
            int slot = rnd.nextInt(8);
            if (rnd.nextBoolean()) {
                engine.submit(new StoreJob(id, List.of(fx.copy(slot, slot, 2 * slot, 2 * slot + 1)), far()));
                storeIds.add(id);
            } else {
                engine.submit(new LoadJob(id, List.of(fx.copy(slot, slot, 20, 21)), far()));
            }
            ids.add(id);
        }
        List<TransferResult> all = engine.await(ids, WAIT); // in completion order
        assertThat(all).as("seed %d", seed).hasSize(60).allMatch(TransferResult::success);
        List<Long> stores = all.stream().map(TransferResult::jobId).filter(storeIds::contains).toList();
        List<Long> loads = all.stream().map(TransferResult::jobId).filter(id -> !storeIds.contains(id)).toList();
        assertThat(stores).as("seed %d", seed).isSorted().hasSize(storeIds.size());
        assertThat(loads).as("seed %d", seed).isSorted().hasSize(60 - storeIds.size());
        assertThat(engine.poll()).isEmpty();
    }

    @Test
    void f03_aJobPastItsDeadlineFailsOnceAndItsLateCompletionIsIgnored() throws Exception {
        engine.close();
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(1);
        ObjIntConsumer<TransferJob> hook = (job, chunk) -> {
            if (job.jobId() == 2) {
                entered.countDown();
                try {
                    stuck.await(); // the job "never completes" until the test lets it go
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        engine = new AsyncTransferEngine(fx.copier, hook);
        storeChain(1);
        fx.fill(10, 2, (byte) 0x5A);

        long start = System.nanoTime();
        engine.submit(new LoadJob(2, fx.chain(1, 0, 10), engine.nanoTime() + Duration.ofMillis(100).toNanos()));
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        List<TransferResult> r = engine.await(List.of(2L), WAIT);
        long waited = System.nanoTime() - start;

        assertThat(r).hasSize(1);
        assertThat(r.getFirst().timedOut()).isTrue();
        assertThat(r.getFirst().firstFailedChunk()).isZero();
        assertThat(waited).isBetween(Duration.ofMillis(100).toNanos(), WAIT.toNanos() / 2);

        stuck.countDown(); // the late "completion"
        TransferResult next = run(new StoreJob(3, fx.chain(1, 1, 4), far())); // FIFO: 2 was handled before
        assertThat(next.success()).isTrue();
        TransferResult after = run(new LoadJob(4, List.of(fx.copy(0, 0, 20, 21)), far())); // behind job 2
        assertThat(after.success()).isTrue();
        assertThat(engine.poll()).isEmpty(); // nothing more about job 2
        assertThat(fx.blockBytes(10)).containsOnly((byte) 0x5A); // the late job copied nothing
        assertThat(engine.inFlight()).isZero();
    }

    @Test
    void f03_aJobExpiringBetweenChunksCopiesNothingAfterItsDeadline() throws Exception {
        engine.close();
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(1);
        engine = new AsyncTransferEngine(fx.copier, (job, chunk) -> {
            if (job.jobId() == 2 && chunk == 1) { // chunk 0 is copied, then the job stalls
                entered.countDown();
                try {
                    stuck.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        storeChain(3);
        byte[] chunk0 = fx.blockBytes(0);
        fx.fill(10, 6, (byte) 0x5A);
        engine.submit(new LoadJob(2, fx.chain(3, 0, 10), engine.nanoTime() + Duration.ofMillis(50).toNanos()));
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

        List<TransferResult> r = engine.await(List.of(2L), WAIT);
        assertThat(r).singleElement().matches(TransferResult::timedOut);
        stuck.countDown();
        assertThat(run(new LoadJob(3, List.of(fx.copy(0, 0, 20, 21)), far())).success()).isTrue(); // 2 is behind us

        assertThat(fx.blockBytes(10)).isEqualTo(chunk0); // copied before the deadline: harmless
        for (int b = 12; b < 16; b++) {
            assertThat(fx.blockBytes(b)).as("block %d after the deadline", b).containsOnly((byte) 0x5A);
        }
        assertThat(engine.poll()).isEmpty();
    }

    @Test
    void everyJobGetsExactlyOneResultUnderTightDeadlines() {
        Random rnd = new Random(seed);
        storeChain(4);
        Map<Long, Integer> seen = new HashMap<>();
        List<Long> ids = new ArrayList<>();
        for (long id = 10; id < 400; id++) {
            long deadline = engine.nanoTime() + rnd.nextInt(300_000);
            int slot = rnd.nextInt(4);
            engine.submit(rnd.nextBoolean()
                    ? new LoadJob(id, List.of(fx.copy(slot, slot, 20, 21)), deadline)
                    : new StoreJob(id, List.of(fx.copy(slot + 4, slot + 4, 22, 23)), deadline));
            ids.add(id);
            if (rnd.nextInt(10) == 0) {
                engine.poll().forEach(r -> seen.merge(r.jobId(), 1, Integer::sum));
            }
        }
        engine.await(ids, WAIT).forEach(r -> seen.merge(r.jobId(), 1, Integer::sum));
        engine.poll().forEach(r -> seen.merge(r.jobId(), 1, Integer::sum));
        assertThat(seen).as("seed %d", seed).hasSize(ids.size());
        assertThat(seen.values()).as("seed %d", seed).containsOnly(1);
        assertThat(engine.inFlight()).isZero();
    }

    @Test
    void awaitAnyReturnsOnTheFirstCompletionAndKeepsTheRestForPoll() {
        storeChain(1);
        engine.submit(new LoadJob(5, fx.chain(1, 0, 10), far()));
        engine.submit(new LoadJob(6, fx.chain(1, 0, 12), far()));
        List<TransferResult> first = engine.awaitAny(List.of(5L, 6L), WAIT);
        assertThat(first).isNotEmpty();
        List<TransferResult> rest = new ArrayList<>(first);
        rest.addAll(engine.await(List.of(5L, 6L), WAIT));
        assertThat(rest).extracting(TransferResult::jobId).containsExactly(5L, 6L);
        assertThat(engine.await(List.of(5L, 99L), Duration.ZERO)).isEmpty(); // already delivered, unknown
    }

    @Test
    void invalidJobsAreRejectedAtSubmission() {
        assertThatThrownBy(() -> engine.submit(new StoreJob(1, List.of(fx.copy(0, 8, 0, 1)), far())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("slot 8 out of 0..7");
        assertThatThrownBy(() -> engine.submit(new StoreJob(1, List.of(fx.copy(0, 0, 0, 32)), far())))
                .hasMessageContaining("device block 32 out of 0..31");
        assertThatThrownBy(() -> engine.submit(new StoreJob(1, List.of(fx.copy(0, 0, -1, 1)), far())))
                .hasMessageContaining("a store needs every device block");
        assertThatThrownBy(() -> engine.submit(new StoreJob(1, List.of(fx.copy(0, 0, 0, 1, 2)), far())))
                .hasMessageContaining("exceeds a slot's");
        engine.submit(new StoreJob(7, fx.chain(1, 0, 0), far()));
        assertThatThrownBy(() -> engine.submit(new StoreJob(7, fx.chain(1, 0, 0), far())))
                .hasMessageContaining("already in flight");
        engine.close();
        assertThatThrownBy(() -> engine.submit(new StoreJob(8, fx.chain(1, 0, 0), far())))
                .isInstanceOf(IllegalStateException.class);
    }
}
