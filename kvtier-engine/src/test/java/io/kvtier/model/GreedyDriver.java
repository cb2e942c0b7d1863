package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Test driver: greedy generation of several sequences through one {@link Transformer}, with its
 * own KV slab and simple block tables, the way run.c generates: the prompt fills positions
 * 0..len-1, a token is chosen by argmax at every position from len-1 up to steps-1, and
 * generation stops after choosing BOS (1), which is kept.
 */
final class GreedyDriver implements AutoCloseable {

    private final Transformer model;
    private final KvLayout layout;
    private final Arena arena;
    private final MemorySegment slab;
    private final int blocksPerSeq;
    private final int maxSeqs;
    private boolean shuffled;
    private long shuffleSeed;

    /** A driver whose slab is confined to the calling thread (attention then stays on it). */
    GreedyDriver(Transformer model, int blockSize, int maxSeqs) {
        this(model, blockSize, maxSeqs, Arena.ofConfined());
    }

    /** A driver whose slab lives in {@code arena} (shared: the compute pool may read it); closes it. */
    GreedyDriver(Transformer model, int blockSize, int maxSeqs, Arena arena) {
        this.model = model;
        this.arena = arena;
        this.layout = model.config().kvLayout(blockSize);
        this.maxSeqs = maxSeqs;
        this.blocksPerSeq = layout.blocksFor(model.config().seqLen());
        this.slab = arena.allocate(layout.bytesPerBlock() * blocksPerSeq * maxSeqs, 64);
    }

    /** Hands out the slab's blocks in a seeded random order instead of 0, 1, 2, ... */
    GreedyDriver shuffledBlocks(long seed) {
        this.shuffled = true;
        this.shuffleSeed = seed;
        return this;
    }

    /** One sequence: the prompt in chunks of {@code prefillChunk} tokens, then one token per step. */
    int[] generate(int[] prompt, int steps, int prefillChunk) {
        return generateAll(List.of(prompt), new int[] {steps}, prefillChunk).getFirst();
    }

    /** Several sequences, every step one forward pass over one chunk of each unfinished sequence. */
    List<int[]> generateAll(List<int[]> prompts, int[] steps, int prefillChunk) {
        int n = prompts.size();
        if (n > maxSeqs) throw new IllegalArgumentException("driver sized for " + maxSeqs + " sequences");
        int[][] tables = blockTables(n);
        int[] next = new int[n];          // next position to feed
        int[] last = new int[n];          // last chosen token
        List<List<Integer>> out = new ArrayList<>();
        boolean[] done = new boolean[n];
        for (int i = 0; i < n; i++) out.add(new ArrayList<>());
        while (true) {
            List<SequenceChunk> chunks = new ArrayList<>();
            List<Integer> who = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (done[i]) continue;
                int[] p = prompts.get(i);
                int[] tokens = next[i] < p.length
                        ? Arrays.copyOfRange(p, next[i], Math.min(p.length, next[i] + prefillChunk))
                        : new int[] {last[i]};
                boolean want = next[i] + tokens.length >= p.length;
                chunks.add(new SequenceChunk(tokens, next[i], tables[i], want));
                who.add(i);
            }
            if (chunks.isEmpty()) break;
            float[][] logits = model.forward(chunks, slab, layout);
            for (int j = 0; j < chunks.size(); j++) {
                int i = who.get(j);
                SequenceChunk ch = chunks.get(j);
                next[i] += ch.tokens().length;
                if (logits[j] == null) continue;
                last[i] = argmax(logits[j]);
                out.get(i).add(last[i]);
                if (last[i] == Tokenizer.BOS || next[i] >= steps[i]) done[i] = true;
            }
        }
        List<int[]> result = new ArrayList<>();
        for (List<Integer> o : out) result.add(o.stream().mapToInt(Integer::intValue).toArray());
        return result;
    }

    private int[][] blockTables(int n) {
        int total = blocksPerSeq * maxSeqs;
        List<Integer> ids = new ArrayList<>();
        for (int b = 0; b < total; b++) ids.add(b);
        if (shuffled) java.util.Collections.shuffle(ids, new Random(shuffleSeed));
        int[][] tables = new int[n][blocksPerSeq];
        for (int i = 0; i < n; i++) {
            for (int b = 0; b < blocksPerSeq; b++) tables[i][b] = ids.get(i * blocksPerSeq + b);
        }
        return tables;
    }

    /** Index of the largest logit, the lowest index on ties. */
    static int argmax(float[] v) {
        return LogitsDriver.argmax(v);
    }

    @Override
    public void close() {
        arena.close();
    }
}
