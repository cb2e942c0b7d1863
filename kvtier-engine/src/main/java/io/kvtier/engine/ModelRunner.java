package io.kvtier.engine;

import java.util.List;

/**
 * Executes one step's forward pass: computes and writes the KV of every scheduled token into the
 * device pool through each chunk's block table, and returns logits where asked. Implementations:
 * the real transformer ({@link LlamaRunner}), a fingerprint model for exact tests, a cost model
 * for trace replay.
 */
public interface ModelRunner extends AutoCloseable {

    /**
     * @param chunks one entry per scheduled sequence
     * @return one entry per chunk: logits [vocabSize] of the chunk's last token if
     *         {@link ScheduledChunk#wantLogits()}, else null; the arrays may be reused, so they are
     *         valid only until the next call (the engine samples them at once)
     */
    float[][] forward(List<ScheduledChunk> chunks);

    int vocabSize();

    /** Positions the model can attend over (its context length). */
    int maxPositions();

    /**
     * Makes the calling thread's per-thread state of the forward pass (the kernels' scratch) now,
     * so that a thread that runs steps but did not build the runner (serve's engine loop) does not
     * make it inside its first step, a branch its compiled code has not seen. None by default.
     */
    default void prepareThread() {
    }

    @Override
    default void close() {
    }
}
