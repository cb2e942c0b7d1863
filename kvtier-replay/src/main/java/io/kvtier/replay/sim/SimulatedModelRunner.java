package io.kvtier.replay.sim;

import io.kvtier.engine.ModelRunner;
import io.kvtier.engine.ScheduledChunk;
import java.util.List;

/**
 * A model runner that computes nothing: each forward pass advances the {@link VirtualClock} by the
 * {@link CostModel}'s time for the batch, writes no KV (the replay's device pool is a tiny
 * stand-in; bytes are accounted by the cost model) and returns logits over a two-token vocabulary
 * whose argmax is {@link #OUTPUT_TOKEN}, so greedy sampling always emits that token and, with no
 * stop token, every request generates exactly its max tokens.
 */
public final class SimulatedModelRunner implements ModelRunner {

    /** Vocabulary size of the simulated model's logits. */
    public static final int VOCAB = 2;

    /** The token greedy sampling picks every time. */
    public static final int OUTPUT_TOKEN = 1;

    // Shared and never written: the sampler only reads logits.
    private static final float[] LOGITS = {0f, 1f};

    /** Called after each forward pass with its chunks and its simulated start and end times, ns. */
    @FunctionalInterface
    public interface Listener {
        void onForward(List<ScheduledChunk> chunks, long startNanos, long endNanos);
    }

    private final CostModel cost;
    private final VirtualClock clock;
    private final int maxPositions;
    private final Listener listener;
    private long forwards;
    private long busyNanos;

    /**
     * @param maxPositions context length the engine enforces, tokens
     * @param listener     told about each forward pass, or null
     */
    public SimulatedModelRunner(CostModel cost, VirtualClock clock, int maxPositions, Listener listener) {
        if (maxPositions < 1) {
            throw new IllegalArgumentException("max positions must be at least 1, got " + maxPositions);
        }
        this.cost = cost;
        this.clock = clock;
        this.maxPositions = maxPositions;
        this.listener = listener;
    }

    @Override
    public float[][] forward(List<ScheduledChunk> chunks) {
        long start = clock.nanoTime();
        long nanos = cost.forwardNanos(chunks);
        clock.advanceBy(nanos);
        forwards++;
        busyNanos += nanos;
        float[][] logits = new float[chunks.size()][];
        for (int i = 0; i < logits.length; i++) {
            if (chunks.get(i).wantLogits()) {
                logits[i] = LOGITS;
            }
        }
        if (listener != null) {
            listener.onForward(chunks, start, clock.nanoTime());
        }
        return logits;
    }

    @Override
    public int vocabSize() {
        return VOCAB;
    }

    @Override
    public int maxPositions() {
        return maxPositions;
    }

    /** Forward passes run. */
    public long forwards() {
        return forwards;
    }

    /** Simulated time spent in forward passes, ns. */
    public long busyNanos() {
        return busyNanos;
    }
}
