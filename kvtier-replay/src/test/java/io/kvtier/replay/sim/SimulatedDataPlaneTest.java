package io.kvtier.replay.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.engine.Sampler;
import io.kvtier.engine.ScheduledChunk;
import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.LoadJob;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulated runner and transfer engine on the virtual clock. */
class SimulatedDataPlaneTest {

    private static final CostModel COST = CostModel.REFERENCE;
    private static final BlockKey K = new BlockKey(1, 2, 3, 4);
    private static final long BLOCK_NANOS = COST.hostTransferNanos(512L * COST.kvBytesPerToken());

    /** {@code n} one-token chunk copies of one block each (shared with {@link SimulatedClockRangeTest}). */
    static List<ChunkCopy> blocks(int n) {
        List<ChunkCopy> c = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            c.add(new ChunkCopy(new int[] {i}, i, K, K, K, new int[0]));
        }
        return c;
    }

    @Test
    void runnerAdvancesTheClockAndAlwaysPicksTheOutputToken() {
        VirtualClock clock = new VirtualClock();
        List<long[]> seen = new ArrayList<>();
        SimulatedModelRunner runner = new SimulatedModelRunner(COST, clock, 4096,
                (chunks, start, end) -> seen.add(new long[] {chunks.size(), start, end}));
        List<ScheduledChunk> step = List.of(new ScheduledChunk(7, new int[100], 0, new int[1], true),
                new ScheduledChunk(8, new int[50], 0, new int[1], false));
        float[][] logits = runner.forward(step);
        assertThat(clock.nanoTime()).isEqualTo(COST.forwardNanos(step));
        assertThat(Sampler.argmax(logits[0])).isEqualTo(SimulatedModelRunner.OUTPUT_TOKEN);
        assertThat(logits[1]).isNull();
        assertThat(seen).hasSize(1);
        assertThat(seen.getFirst()).containsExactly(2, 0, clock.nanoTime());
        assertThat(runner.busyNanos()).isEqualTo(clock.nanoTime());
        assertThat(runner.vocabSize()).isEqualTo(2);
    }

    @Test
    void jobsOfOneDirectionQueueAndTheTwoDirectionsOverlap() {
        VirtualClock clock = new VirtualClock();
        SimulatedTransferEngine te = new SimulatedTransferEngine(COST, clock, 512);
        te.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE));
        te.submit(new StoreJob(2, blocks(2), Long.MAX_VALUE));
        te.submit(new LoadJob(3, blocks(1), Long.MAX_VALUE));
        long twoBlocks = COST.hostTransferNanos(2 * 512L * COST.kvBytesPerToken());
        assertThat(te.poll()).isEmpty();
        clock.advanceTo(BLOCK_NANOS);
        // store 1 and load 3 both end at one block's time (separate lanes); store 2 queues behind store 1
        assertThat(te.poll()).extracting(TransferResult::jobId).containsExactly(1L, 3L);
        assertThat(te.nextCompletionNanos()).isEqualTo(BLOCK_NANOS + twoBlocks);
        assertThat(te.inFlight()).isEqualTo(1);
        List<TransferResult> r = te.awaitAny(List.of(2L), Duration.ofSeconds(10));
        assertThat(r).extracting(TransferResult::jobId).containsExactly(2L);
        assertThat(r.getFirst().success()).isTrue();
        assertThat(r.getFirst().bytes()).isEqualTo(2 * 512L * COST.kvBytesPerToken());
        assertThat(clock.nanoTime()).isEqualTo(BLOCK_NANOS + twoBlocks);
        assertThat(te.storeBytes()).isEqualTo(3 * 512L * COST.kvBytesPerToken());
        assertThat(te.inFlight()).isZero();
    }

    @Test
    void kvGroupsShareTheLanesAndEachPollsOnlyItsOwnJobs() {
        VirtualClock clock = new VirtualClock();
        SimulatedTransferEngine lanes = new SimulatedTransferEngine(COST, clock, 512);
        SimulatedTransferEngine full = lanes.sharingLanes(1000);
        SimulatedTransferEngine window = lanes.sharingLanes(5000);
        // Both groups' schedulers number their jobs from 1: the same id in two groups is two jobs.
        full.submit(new StoreJob(1, blocks(2), Long.MAX_VALUE));
        window.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE));
        long fullNanos = COST.hostTransferNanos(2 * 512L * 1000);
        long windowNanos = COST.hostTransferNanos(512L * 5000);
        // The window group's store queues behind the full group's on the one device->host lane.
        assertThat(window.nextCompletionNanos()).isEqualTo(fullNanos + windowNanos);
        clock.advanceTo(fullNanos);
        assertThat(window.poll()).isEmpty();
        List<TransferResult> f = full.poll();
        assertThat(f).extracting(TransferResult::bytes).containsExactly(2 * 512L * 1000);
        List<TransferResult> w = window.awaitAny(List.of(1L), Duration.ofSeconds(10));
        assertThat(w).extracting(TransferResult::bytes).containsExactly(512L * 5000);
        assertThat(clock.nanoTime()).isEqualTo(fullNanos + windowNanos);
        // The lane counters are the lanes' totals, read from any sharer.
        assertThat(lanes.storeBytes()).isEqualTo(full.storeBytes()).isEqualTo(2 * 512L * 1000 + 512L * 5000);
        assertThat(window.storeBusyNanos()).isEqualTo(fullNanos + windowNanos);
        assertThatThrownBy(() -> lanes.sharingLanes(0)).hasMessageContaining("KV bytes per token must be >= 1");
    }

    @Test
    void awaitStopsAtTheTimeoutAndKeepsOtherResultsForPoll() {
        VirtualClock clock = new VirtualClock();
        SimulatedTransferEngine te = new SimulatedTransferEngine(COST, clock, 512);
        te.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE));
        te.submit(new LoadJob(2, blocks(1), Long.MAX_VALUE));
        assertThat(te.await(List.of(1L), Duration.ofNanos(BLOCK_NANOS / 2))).isEmpty();
        assertThat(clock.nanoTime()).isEqualTo(BLOCK_NANOS / 2);
        assertThat(te.await(List.of(1L), Duration.ofSeconds(1))).extracting(TransferResult::jobId).containsExactly(1L);
        assertThat(te.poll()).extracting(TransferResult::jobId).containsExactly(2L);
    }

    @Test
    void aJobThatWouldEndAfterItsDeadlineFailsAtTheDeadline() {
        VirtualClock clock = new VirtualClock();
        SimulatedTransferEngine te = new SimulatedTransferEngine(COST, clock, 512);
        te.submit(new LoadJob(1, blocks(4), BLOCK_NANOS));
        List<TransferResult> r = te.awaitAny(List.of(1L), Duration.ofSeconds(1));
        assertThat(r).hasSize(1);
        assertThat(r.getFirst().timedOut()).isTrue();
        assertThat(clock.nanoTime()).isEqualTo(BLOCK_NANOS);
    }

    @Test
    void duplicateIdsAndClosedEnginesAreRefused() {
        SimulatedTransferEngine te = new SimulatedTransferEngine(COST, new VirtualClock(), 512);
        te.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE));
        assertThatThrownBy(() -> te.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already in flight");
        te.close();
        assertThatThrownBy(() -> te.submit(new StoreJob(2, blocks(1), Long.MAX_VALUE)))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theClockNeverGoesBack() {
        VirtualClock c = new VirtualClock();
        c.advanceTo(100);
        c.advanceTo(50);
        assertThat(c.nanoTime()).isEqualTo(100);
        assertThatThrownBy(() -> c.advanceBy(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
