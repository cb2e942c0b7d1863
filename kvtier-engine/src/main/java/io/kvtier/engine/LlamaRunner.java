package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvCacheManager;
import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvGroups;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.model.Model;
import io.kvtier.model.Kernels;
import io.kvtier.model.PagedKv;
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

    private final Model checkpoint;
    private final PagedKv kv;
    private final Kernels kernels;
    private final ForkJoinPool compute;
    private final Transformer transformer;

    /**
     * @param threads compute threads (0 = one per core)
     */
    public LlamaRunner(Model checkpoint, BlockPool pool, Kernels kernels, int threads) {
        this(checkpoint, PagedKv.single(pool.slab(), pool.layout()), kernels, threads);
    }

    /**
     * A runner writing each layer's KV into the slab of its KV group.
     *
     * @param threads compute threads (0 = one per core)
     */
    public LlamaRunner(Model checkpoint, PagedKv kv, Kernels kernels, int threads) {
        this.checkpoint = checkpoint;
        this.kv = kv;
        this.kernels = kernels;
        kernels.prepareThread();   // generate runs the steps on the thread that builds the runner
        this.compute = ComputePool.create(threads, kernels::prepareThread);
        this.transformer = new Transformer(checkpoint, kernels, compute);
        this.transformer.reuseLogitArrays();   // the engine samples a step's logits before the next step (ModelRunner#forward)
    }

    /**
     * An engine on this checkpoint: a device pool of {@code config.deviceBlocks()} blocks per KV
     * group shaped by the group's layers, and block keys in the namespace of the exact weights (the
     * file's SHA-256). A model with sliding-window layers has a full-attention group and a window
     * group ({@link KvGroups#of}), whose blocks are given back once they leave every query's
     * window; every other model has one group. The engine owns everything and closes it, the
     * checkpoint included.
     */
    public static Engine engine(Model checkpoint, EngineConfig config, Kernels kernels, int threads) {
        return engine(checkpoint, config, kernels, threads, OffloadSetup.OFF);
    }

    /**
     * The same, with the offload tiers of {@code offload} (off when it is not enabled): with
     * several KV groups, one scheduler per group, each storing and loading its group's blocks by
     * the group's rule ({@link OffloadSetup#build(List, List, Namespace, KvEvents)}).
     */
    public static Engine engine(Model checkpoint, EngineConfig config, Kernels kernels, int threads, OffloadSetup offload) {
        return engine(checkpoint, config, kernels, threads, offload, null);
    }

    /**
     * The same, reporting every change of the device prefix cache and of the offload tiers to
     * {@code events} in one sequence (null: no events).
     */
    public static Engine engine(Model checkpoint, EngineConfig config, Kernels kernels, int threads, OffloadSetup offload,
                                KvEvents events) {
        KvLayout all = checkpoint.config().kvLayout(config.blockSize());
        List<KvGroup> groups = groupsOf(checkpoint);
        List<BlockPool> pools = new ArrayList<>(groups.size());
        try {
            for (KvGroup g : groups) {
                pools.add(new BlockPool(config.deviceBlocks(), layoutOf(g, all)));
            }
            Namespace ns = Namespace.of(checkpoint.modelId(), all, offload.config().blocksPerChunk());
            OffloadScheduler scheduler = offload.build(pools, groups, ns, events == null ? KvEvents.discarding() : events);
            PagedKv paged = PagedKv.of(groups, pools.stream().map(BlockPool::slab).toList(),
                    pools.stream().map(BlockPool::layout).toList());
            LlamaRunner runner = new LlamaRunner(checkpoint, paged, kernels, threads);
            return new Engine(config, new KvCacheManager(groups, pools, config.prefixCaching()), runner,
                    BlockHasher.sha256(ns), scheduler, events);
        } catch (RuntimeException e) {
            pools.forEach(BlockPool::close);
            checkpoint.close();
            throw e;
        }
    }

    /**
     * Refuses {@code offload}'s host and disk byte budgets for {@code checkpoint}'s KV groups with
     * blocks of {@code blockSize} tokens ({@link TierBudgets#check}) without building anything: for
     * a command that prints before it builds its engine.
     *
     * @throws IllegalArgumentException one line naming the flag and the least budget
     */
    public static void checkBudgets(Model checkpoint, int blockSize, OffloadSetup offload) {
        KvLayout all = checkpoint.config().kvLayout(blockSize);
        TierBudgets.check(offload, groupsOf(checkpoint).stream().map(g -> layoutOf(g, all)).toList());
    }

    /** The layout of group {@code g}'s blocks: its layers of the model's layout {@code all}. */
    private static KvLayout layoutOf(KvGroup g, KvLayout all) {
        return new KvLayout(g.layers().length, all.kvHeads(), all.headDim(), all.blockSize());
    }

    /** The model's KV groups: one per attention kind of its layers (one for a model without sliding-window layers). */
    public static List<KvGroup> groupsOf(Model model) {
        int[] windows = new int[model.config().layers()];
        for (int l = 0; l < windows.length; l++) {
            windows[l] = model.spec().window(l);
        }
        return KvGroups.of(windows);
    }

    @Override
    public float[][] forward(List<ScheduledChunk> chunks) {
        List<SequenceChunk> seqs = new ArrayList<>(chunks.size());
        for (ScheduledChunk c : chunks) {
            seqs.add(new SequenceChunk(c.tokens(), c.startPos(), c.blockTables(), c.wantLogits()));
        }
        return transformer.forward(seqs, kv);
    }

    @Override
    public void prepareThread() {
        kernels.prepareThread();
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
