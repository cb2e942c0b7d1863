package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.Namespace;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.model.SequenceChunk;
import io.kvtier.model.Transformer;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.tier.KvEvents;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * The real model runner: the Llama transformer of a llama2.c checkpoint, computing KV into the
 * device pool's slab. Owns (and closes) the checkpoint, its compute pool and the transformer.
 */
public final class LlamaRunner implements ModelRunner {

    private final Checkpoint checkpoint;
    private final BlockPool pool;
    private final ForkJoinPool compute;
    private final Transformer transformer;

    /**
     * @param threads compute threads (0 = one per core)
     */
    public LlamaRunner(Checkpoint checkpoint, BlockPool pool, Kernels kernels, int threads) {
        this.checkpoint = checkpoint;
        this.pool = pool;
        this.compute = ComputePool.create(threads);
        this.transformer = new Transformer(checkpoint, kernels, compute);
    }

    /**
     * An engine on this checkpoint: a device pool of {@code config.deviceBlocks()} blocks shaped
     * by the model, and block keys in the namespace of the exact weights (the file's SHA-256).
     * The engine owns everything and closes it, the checkpoint included.
     */
    public static Engine engine(Checkpoint checkpoint, EngineConfig config, Kernels kernels, int threads) {
        return engine(checkpoint, config, kernels, threads, OffloadSetup.OFF);
    }

    /** The same, with the offload tiers of {@code offload} (off when it is not enabled). */
    public static Engine engine(Checkpoint checkpoint, EngineConfig config, Kernels kernels, int threads, OffloadSetup offload) {
        BlockPool pool = new BlockPool(config.deviceBlocks(), checkpoint.config().kvLayout(config.blockSize()));
        try {
            Namespace ns = Namespace.of(checkpoint.modelId(), pool.layout(), offload.config().blocksPerChunk());
            OffloadScheduler scheduler = offload.build(pool, ns, KvEvents.discarding());
            LlamaRunner runner = new LlamaRunner(checkpoint, pool, kernels, threads);
            return new Engine(config, pool, runner, BlockHasher.sha256(ns), scheduler);
        } catch (RuntimeException e) {
            pool.close();
            checkpoint.close();
            throw e;
        }
    }

    @Override
    public float[][] forward(List<ScheduledChunk> chunks) {
        List<SequenceChunk> seqs = new ArrayList<>(chunks.size());
        for (ScheduledChunk c : chunks) {
            seqs.add(new SequenceChunk(c.tokens(), c.startPos(), c.blockTable(), c.wantLogits()));
        }
        return transformer.forward(seqs, pool.slab(), pool.layout());
    }

    @Override
    public int vocabSize() {
        return checkpoint.config().vocabSize();
    }

    @Override
    public int maxPositions() {
        return checkpoint.config().seqLen();
    }

    @Override
    public void close() {
        transformer.close();
        compute.shutdownNow();
        checkpoint.close();
    }
}
