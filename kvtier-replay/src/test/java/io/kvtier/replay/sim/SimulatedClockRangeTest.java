package io.kvtier.replay.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.engine.ScheduledChunk;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.RemoteJob;
import io.kvtier.offload.transfer.StoreJob;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The virtual clock's range and the lanes' busy time inside a run (a new user's trial 27): a cost
 * too large for the clock is refused where it would wrap around, and a lane booked past the run's
 * end counts only the part before it.
 */
class SimulatedClockRangeTest {

    private static final CostModel COST = CostModel.REFERENCE;
    private static final long BLOCK_NANOS = COST.hostTransferNanos(512L * COST.kvBytesPerToken());

    private static List<ChunkCopy> blocks(int n) {
        return SimulatedDataPlaneTest.blocks(n);
    }

    @Test
    void theClockRefusesToPassItsRangeInsteadOfWrappingAround() {
        VirtualClock clock = new VirtualClock();
        clock.advanceBy(Long.MAX_VALUE - 2);
        assertThatThrownBy(() -> clock.advanceBy(2)).isInstanceOf(ClockOverflowException.class)
                .hasMessage("the simulated time passed the simulator's clock (2^63 ns, about 292 years)");
        assertThat(clock.nanoTime()).isEqualTo(Long.MAX_VALUE - 2);
        clock.advanceBy(1);
        assertThat(clock.nanoTime()).isEqualTo(Long.MAX_VALUE - 1);
        // A cost rounded from a double beyond a long is Long.MAX_VALUE: refused even from 0.
        assertThatThrownBy(() -> VirtualClock.after(0, Math.round(1e30))).isInstanceOf(ClockOverflowException.class);
    }

    /** --linear-us-per-token 1e30 was an ArithmeticException's stack trace out of the step. */
    @Test
    void aStepTooLongForTheClockIsAClockOverflow() {
        CostModel slow = new CostModel("slow", COST.kvBytesPerToken(), 1e33, COST.attentionNanosPerPair(), COST.weightReadNanos(),
                COST.kvReadNanosPerToken(), COST.stepOverheadNanos(), COST.hostBytesPerSecond(), COST.hostLatencyNanos(),
                COST.contextTokens());
        SimulatedModelRunner runner = new SimulatedModelRunner(slow, new VirtualClock(), 4096, (chunks, start, end) -> { });
        assertThatThrownBy(() -> runner.forward(List.of(new ScheduledChunk(7, new int[100], 0, new int[1], true))))
                .isInstanceOf(ClockOverflowException.class);
    }

    /** --remote-gbps 1e-300: the job's end wrapped around to a negative time, so its hits were served at once. */
    @Test
    void aRemoteJobThatWouldNeverEndIsAClockOverflowNotAnInstantJob() {
        VirtualClock clock = new VirtualClock();
        SimulatedTransferEngine te = new SimulatedTransferEngine(COST, clock, 512, new SimulatedRemoteStore(10, 200_000, 1e-300));
        clock.advanceBy(1_000);
        assertThatThrownBy(() -> te.submit(new RemoteJob(1, RemoteJob.Kind.WRITE, blocks(1), Long.MAX_VALUE)))
                .isInstanceOf(ClockOverflowException.class);
        assertThat(te.poll()).isEmpty();
        assertThat(te.inFlight()).isZero();
    }

    /** A 1 MB/s host link showed the store lane busy 124,753% of the makespan: its jobs outlived the run. */
    @Test
    void aLaneIsBusyOnlyUpToTheTimeAsked() {
        VirtualClock clock = new VirtualClock();
        SimulatedTransferEngine te = new SimulatedTransferEngine(COST, clock, 512);
        te.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE)); // [0, B)
        long twoBlocks = COST.hostTransferNanos(2 * 512L * COST.kvBytesPerToken());
        te.submit(new StoreJob(2, blocks(2), Long.MAX_VALUE)); // [B, B + 2B')
        clock.advanceTo(5 * BLOCK_NANOS + 2 * twoBlocks);
        SimulatedTransferEngine group = te.sharingLanes(COST.kvBytesPerToken());
        group.submit(new StoreJob(1, blocks(1), Long.MAX_VALUE)); // a gap, then [5B + 2B', 6B + 2B')
        assertThat(te.storeBusyNanosUntil(BLOCK_NANOS / 2)).isEqualTo(BLOCK_NANOS / 2);
        assertThat(te.storeBusyNanosUntil(BLOCK_NANOS + 7)).isEqualTo(BLOCK_NANOS + 7);
        assertThat(te.storeBusyNanosUntil(4 * BLOCK_NANOS)).isEqualTo(BLOCK_NANOS + twoBlocks);
        assertThat(te.storeBusyNanosUntil(5 * BLOCK_NANOS + 2 * twoBlocks + 11)).isEqualTo(BLOCK_NANOS + twoBlocks + 11);
        assertThat(te.storeBusyNanosUntil(Long.MAX_VALUE)).isEqualTo(te.storeBusyNanos()).isEqualTo(2 * BLOCK_NANOS + twoBlocks);
        assertThat(te.loadBusyNanosUntil(Long.MAX_VALUE)).isZero();
    }
}
