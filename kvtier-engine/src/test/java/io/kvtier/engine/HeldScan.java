package io.kvtier.engine;

import io.kvtier.tier.disk.DiskIndexScan;
import io.kvtier.tier.disk.RestartScan;
import io.kvtier.tier.disk.ScannedChunk;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * Test fake of a disk tier's restart scan: it reports exactly the chunks a test hands it
 * ({@link #report}), at the step the test chooses, which a real scan does whenever its threads
 * get to it. Over once the test {@link #end}s it.
 */
final class HeldScan implements RestartScan {
    private final Queue<ScannedChunk> queue = new ConcurrentLinkedQueue<>();
    private volatile boolean ended;
    private volatile long reported;

    /** The scan found {@code c} (delivered at the engine's next drain). */
    void report(ScannedChunk c) {
        queue.add(c);
        reported++;
    }

    /** The scan is over: nothing more is reported. */
    void end() {
        ended = true;
    }

    @Override
    public int drain(int max, Consumer<? super ScannedChunk> sink) {
        return RestartScan.drain(queue, max, sink);
    }

    @Override
    public boolean finished() {
        return ended && queue.isEmpty();
    }

    @Override
    public DiskIndexScan.Progress progress() {
        return new DiskIndexScan.Progress(reported, reported, reported, 0, 0, 0, true, ended);
    }

    @Override
    public boolean awaitEnd(Duration timeout) {
        return ended;
    }

    @Override
    public void close() {
        end();
    }
}
