package io.kvtier.offload.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FaultInjectingTransferEngineTest {

    private static final long DEADLINE = Duration.ofSeconds(1).toNanos();

    private final TransferFixture fx = new TransferFixture(32, 8, 1, 7);
    private final TransferClock.Manual clock = new TransferClock.Manual(0);
    private final FaultInjectingTransferEngine engine = new FaultInjectingTransferEngine(fx.copier, clock);

    @AfterEach
    void close() {
        engine.close();
        fx.close();
    }

    private StoreJob store(long id, int chunk) {
        return new StoreJob(id, List.of(fx.copy(chunk, chunk, chunk)), clock.nanoTime() + DEADLINE);
    }

    private LoadJob load(long id, int chunk, int block) {
        return new LoadJob(id, List.of(fx.copy(chunk, chunk, block)), clock.nanoTime() + DEADLINE);
    }

    private static List<Long> ids(List<TransferResult> results) {
        return results.stream().map(TransferResult::jobId).toList();
    }

    @Test
    void heldJobCompletesOnlyWhenReleasedAndHoldsBackItsDirectionOnly() {
        engine.submit(store(1, 0));
        engine.submit(store(2, 1));
        assertThat(ids(engine.poll())).containsExactly(1L, 2L);

        engine.holdStores();
        engine.submit(store(3, 2));
        engine.clearFaults();
        engine.submit(store(4, 3));   // behind the held store
        engine.submit(load(5, 0, 20)); // another direction: not delayed
        for (int i = 0; i < 5; i++) {
            assertThat(ids(engine.poll())).isSubsetOf(5L);
        }
        assertThat(engine.heldIds()).containsExactly(3L);
        assertThat(engine.pendingIds()).containsExactly(3L, 4L);
        assertThat(engine.release(3)).isTrue();
        assertThat(ids(engine.poll())).containsExactly(3L, 4L);
        assertThat(engine.inFlight()).isZero();
    }

    @Test
    void f03_heldJobFailsAtItsDeadlineOnceAndReleasingItLaterCopiesNothing() {
        engine.submit(store(1, 0));
        engine.poll();
        fx.fill(20, 1, (byte) 0x5A);
        engine.holdLoads();
        engine.submit(load(2, 0, 20));

        clock.advance(Duration.ofMillis(999));
        assertThat(engine.poll()).isEmpty();
        clock.advance(Duration.ofMillis(1));
        List<TransferResult> r = engine.poll();
        assertThat(r).hasSize(1);
        assertThat(r.getFirst().timedOut()).isTrue();
        assertThat(r.getFirst().nanos()).isEqualTo(DEADLINE);

        assertThat(engine.release(2)).isFalse(); // the late completion
        assertThat(engine.poll()).isEmpty();
        assertThat(fx.blockBytes(20)).containsOnly((byte) 0x5A);
    }

    @Test
    void awaitOnAHeldJobAdvancesTheManualClockToItsDeadline() {
        engine.holdStores();
        engine.submit(store(1, 0));
        List<TransferResult> r = engine.await(List.of(1L), Duration.ofSeconds(5));
        assertThat(r).hasSize(1);
        assertThat(r.getFirst().timedOut()).isTrue();
        assertThat(clock.nanoTime()).isEqualTo(DEADLINE);

        engine.submit(store(2, 1));
        assertThat(engine.await(List.of(2L), Duration.ofMillis(10))).isEmpty(); // held, timeout first
        assertThat(clock.nanoTime()).isEqualTo(DEADLINE + Duration.ofMillis(10).toNanos());
    }

    @Test
    void failWholeJobOrAtAChunkKey() {
        engine.failJobs(j -> j.jobId() == 1);
        engine.submit(new StoreJob(1, fx.chain(3, 0, 0), DEADLINE));
        TransferResult whole = engine.poll().getFirst();
        assertThat(whole).isEqualTo(TransferResult.failed(1, 0, whole.nanos(), 0, FaultInjectingTransferEngine.INJECTED));

        engine.clearFaults();
        engine.failChunk(TransferFixture.key(1));
        engine.submit(new StoreJob(2, fx.chain(3, 0, 0), DEADLINE));
        TransferResult atChunk = engine.poll().getFirst();
        assertThat(atChunk.firstFailedChunk()).isEqualTo(1);
        assertThat(atChunk.bytes()).isEqualTo(fx.bytesPerBlock());

        engine.clearFaults();
        engine.submit(new StoreJob(3, fx.chain(3, 0, 0), DEADLINE));
        assertThat(engine.poll().getFirst().success()).isTrue();
        fx.fill(10, 3, (byte) 0x5A);
        engine.failChunk(TransferFixture.key(2));
        engine.submit(new LoadJob(4, fx.chain(3, 0, 10), DEADLINE));
        TransferResult loadFail = engine.poll().getFirst();
        assertThat(loadFail.firstFailedChunk()).isEqualTo(2);
        assertThat(fx.blockBytes(10)).isEqualTo(fx.blockBytes(0));
        assertThat(fx.blockBytes(11)).isEqualTo(fx.blockBytes(1));
        assertThat(fx.blockBytes(12)).containsOnly((byte) 0x5A);
    }

    @Test
    void delayedJobsCompleteAfterTheGivenNumberOfPollsUnlessAwaited() {
        engine.delayJobs(j -> j.jobId() == 1, 2);
        engine.submit(store(1, 0));
        engine.submit(store(2, 1)); // FIFO behind 1
        engine.submit(load(3, 0, 20)); // loads are not held back (it fails: slot 0 is not written yet)
        assertThat(ids(engine.poll())).containsExactly(3L);
        assertThat(engine.poll()).isEmpty();
        assertThat(ids(engine.poll())).containsExactly(1L, 2L);

        engine.submit(store(4, 2));
        assertThat(ids(engine.await(List.of(4L), Duration.ZERO))).containsExactly(4L); // rule still on, await waits it out
    }

    @Test
    void reorderLetsLaterJobsOvertake() {
        engine.reorder(true);
        engine.holdJobs(j -> j.jobId() == 1);
        engine.submit(store(1, 0));
        engine.submit(store(2, 1));
        engine.submit(store(3, 2));
        assertThat(ids(engine.poll())).containsExactly(3L, 2L);
        engine.release(1);
        assertThat(ids(engine.poll())).containsExactly(1L);
    }

    @Test
    void f02_corruptedOrTruncatedSlotFailsTheLoad() {
        engine.submit(new StoreJob(1, fx.chain(2, 0, 0), DEADLINE));
        assertThat(engine.poll().getFirst().success()).isTrue();

        engine.corruptPayloadByte(1, 17);
        engine.submit(new LoadJob(2, fx.chain(2, 0, 10), DEADLINE));
        TransferResult flipped = engine.poll().getFirst();
        assertThat(flipped.firstFailedChunk()).isEqualTo(1);
        assertThat(flipped.error()).contains("payload checksum mismatch");

        engine.truncate(0, 60);
        engine.submit(new LoadJob(3, fx.chain(1, 0, 10), DEADLINE));
        assertThat(engine.poll().getFirst().error()).contains("chunk header");

        engine.submit(new StoreJob(4, fx.chain(1, 0, 0), DEADLINE));
        engine.poll();
        engine.corruptHeaderByte(0, 50); // inside the key
        engine.submit(new LoadJob(5, fx.chain(1, 0, 10), DEADLINE));
        assertThat(engine.poll().getFirst().success()).isFalse();
    }
}
