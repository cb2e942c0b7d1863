package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.function.Consumer;

/**
 * The chunk files a disk tier found at its start, handed to the engine thread as they are found
 * ({@link DiskIndexScan} reads them from the directory in the background). A chunk is reported
 * as its file was when it was listed: by the time it is drained, this process may have dropped
 * the chunk and deleted its file (the disk tier ignores such reports).
 */
public interface RestartScan extends AutoCloseable {

    /**
     * Hands up to {@code max} found chunks to {@code sink}, oldest file first, on the calling
     * thread (the engine thread, each step). Never blocks.
     *
     * @return how many were handed over
     */
    int drain(int max, Consumer<? super ScannedChunk> sink);

    /**
     * Chunks the tier holds whose files are gone (another process deleted them), found since the
     * last call, each once: for the tier to drop. A scan that only adds reports none.
     */
    default List<BlockKey> takeVanished() {
        return List.of();
    }

    /** Whether the scan is over and every found chunk was drained (nothing more will come). */
    boolean finished();

    /** Counts so far. */
    DiskIndexScan.Progress progress();

    /**
     * Waits until the scan is over or {@code timeout} elapsed.
     *
     * @return whether the scan is over
     */
    boolean awaitEnd(Duration timeout) throws InterruptedException;

    /** Stops the scan; chunks not yet found are never delivered (they stay misses). */
    @Override
    void close();

    /** {@link #drain} of a scan whose found chunks wait in {@code queue}, in order. */
    static int drain(Queue<ScannedChunk> queue, int max, Consumer<? super ScannedChunk> sink) {
        int n = 0;
        for (ScannedChunk c; n < max && (c = queue.poll()) != null; n++) {
            sink.accept(c);
        }
        return n;
    }
}
