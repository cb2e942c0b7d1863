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

    @Override
    default void close() {
    }
}
