package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;

/**
 * The Llama transformer of a llama2.c checkpoint, run one engine step at a time over a batch of
 * chunks of different sequences, with its KV cache in a paged slab.
 *
 * <p>The forward pass follows llama2.c {@code run.c}'s {@code forward}, top to bottom, except
 * that every step works on all {@code T} tokens of the batch at once, so each weight matrix is
 * read from memory once per step however many tokens there are. Shapes in comments: {@code T}
 * tokens in the step, {@code D} = dim, {@code KV} = kvDim, {@code H} = hiddenDim, {@code V} =
 * vocabSize, {@code C} = chunks that want logits.
 *
 * <p>Not thread-safe: one engine thread calls {@link #forward}; the computation itself is spread
 * over the given pool (large matrix products split by output rows, attention by heads).
 */
public final class Transformer implements AutoCloseable {

    private static final float EPS = 1e-5f;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A thread that owns nothing: a segment accessible by it is accessible by the pool's workers. */
    private static final Thread NOT_THE_OWNER = Thread.ofVirtual().unstarted(() -> { });

    private final Checkpoint w;
    private final ModelConfig c;
    private final Kernels kernels;
    private final Parallel parallel;
    private final Rope rope;
    private final PagedAttention attention;
    private Activations a;

    /**
     * @param checkpoint  the weights (not owned: the caller closes it after this transformer)
     * @param kernels     numeric kernels, usually {@link Kernels#best()}
     * @param computePool pool for the parallel parts of a step (not owned)
     */
    public Transformer(Checkpoint checkpoint, Kernels kernels, ForkJoinPool computePool) {
        this.w = Objects.requireNonNull(checkpoint, "checkpoint");
        this.c = checkpoint.config();
        this.kernels = Objects.requireNonNull(kernels, "kernels");
        this.parallel = new Parallel(Objects.requireNonNull(computePool, "computePool"));
        this.rope = new Rope(c.headDim(), c.seqLen());
        this.attention = new PagedAttention(c, kernels);
        this.a = new Activations(c, parallel.threads());
    }

    public ModelConfig config() {
        return c;
    }

    public Kernels kernels() {
        return kernels;
    }

    /**
     * One step: runs every token of every chunk, writes its K and V into {@code kvSlab} at its
     * position's slot, and returns, per chunk in order, the logits {@code [vocab]} of its last
     * token when {@link SequenceChunk#wantLogits()}, else null. Each chunk must belong to a
     * different sequence; a token attends to positions 0..p of its own sequence through the
     * block table, earlier tokens of its own chunk included (all K/V of a layer are written
     * before that layer's attention).
     *
     * @param kvSlab block {@code b} occupies bytes {@code [b * layout.bytesPerBlock(), (b+1) * layout.bytesPerBlock())}
     * @param layout must match the model's layers, kvHeads and headDim
     * @throws IllegalArgumentException for a layout of another model, a token id outside the
     *         vocabulary, a position at or beyond seqLen, a block table that does not cover the
     *         chunk or names a block outside the slab
     * @throws IllegalStateException after {@link #close()}
     */
    public float[][] forward(List<SequenceChunk> chunks, MemorySegment kvSlab, KvLayout layout) {
        if (a == null) {
            throw new IllegalStateException("transformer is closed");
        }
        int tokens = gather(chunks, kvSlab, layout);
        embed(tokens);                                   // x[T][D] = embedding[token]
        for (int l = 0; l < c.layers(); l++) {
            rmsnorm(a.x, a.xb, w.rmsAtt(l), tokens);      // xb[T][D] = rmsnorm(x) * rms_att
            qkv(l, tokens);                               // q[T][D], k[T][KV], v[T][KV]
            rotary(tokens);                               // rotate q and k in place
            attention.writeKv(l, tokens, a, chunks, kvSlab, layout);
            attend(l, tokens, chunks, kvSlab, layout);    // xb2[T][D] = attention over the slab
            matmul(w.wo(l), c.dim(), c.dim(), a.xb2, tokens, a.xb);  // xb[T][D] = xb2 wo^T
            residual(tokens);                             // x += xb
            rmsnorm(a.x, a.xb, w.rmsFfn(l), tokens);      // xb[T][D] = rmsnorm(x) * rms_ffn
            ffn(l, tokens);                               // xb[T][D] = w2(silu(w1 xb) * w3 xb)
            residual(tokens);                             // x += xb
        }
        return classify(chunks);                          // [chunks][V] or null
    }

    /** Validates the batch and fills the per-token arrays; returns T. */
    private int gather(List<SequenceChunk> chunks, MemorySegment slab, KvLayout layout) {
        if (layout.layers() != c.layers() || layout.kvHeads() != c.kvHeads() || layout.headDim() != c.headDim()) {
            throw new IllegalArgumentException("KV layout " + layout + " does not fit model " + c);
        }
        long slabBlocks = slab.byteSize() / layout.bytesPerBlock();
        int tokens = 0;
        for (SequenceChunk ch : chunks) {
            if (ch.lastPos() >= c.seqLen()) {
                throw new IllegalArgumentException("position " + ch.lastPos() + " is beyond the model's seq_len "
                        + c.seqLen());
            }
            int blocks = layout.blocksFor(ch.lastPos() + 1L);
            if (ch.blockTable().length < blocks) {
                throw new IllegalArgumentException("block table of " + ch.blockTable().length
                        + " blocks does not cover position " + ch.lastPos() + " (needs " + blocks + ")");
            }
            for (int b = 0; b < blocks; b++) {
                int id = ch.blockTable()[b];
                if (id < 0 || id >= slabBlocks) {
                    throw new IllegalArgumentException("block id " + id + " is outside the slab of " + slabBlocks + " blocks");
                }
            }
            for (int t : ch.tokens()) {
                if (t < 0 || t >= c.vocabSize()) {
                    throw new IllegalArgumentException("token id " + t + " is outside the vocabulary of " + c.vocabSize());
                }
            }
            tokens += ch.tokens().length;
        }
        a.ensureTokens(tokens);
        int t = 0;
        for (int i = 0; i < chunks.size(); i++) {
            SequenceChunk ch = chunks.get(i);
            for (int j = 0; j < ch.tokens().length; j++, t++) {
                a.token[t] = ch.tokens()[j];
                a.pos[t] = ch.startPos() + j;
                a.chunk[t] = i;
            }
        }
        return tokens;
    }

    /** x[t] = token embedding row of token[t]. */
    private void embed(int tokens) {
        int dim = c.dim();
        for (int t = 0; t < tokens; t++) {
            MemorySegment.copy(w.tokenEmbedding(), F32, (long) a.token[t] * dim * Float.BYTES, a.x, t * dim, dim);
        }
    }

    /** out[t] = rmsnorm(in[t]) * weight, for every token; [T][D]. */
    private void rmsnorm(float[] in, float[] out, MemorySegment weight, int tokens) {
        for (int t = 0; t < tokens; t++) {
            kernels.rmsnorm(out, t * c.dim(), in, t * c.dim(), weight, c.dim(), EPS);
        }
    }

    /** q[T][D] = xb wq^T, k[T][KV] = xb wk^T, v[T][KV] = xb wv^T. */
    private void qkv(int l, int tokens) {
        matmul(w.wq(l), c.dim(), c.dim(), a.xb, tokens, a.q);
        matmul(w.wk(l), c.dim(), c.kvDim(), a.xb, tokens, a.k);
        matmul(w.wv(l), c.dim(), c.kvDim(), a.xb, tokens, a.v);
    }

    /** Rotary embedding of every query head and every key head at the token's position. */
    private void rotary(int tokens) {
        for (int t = 0; t < tokens; t++) {
            rope.rotate(a.q, t * c.dim(), c.heads(), a.pos[t]);
            rope.rotate(a.k, t * c.kvDim(), c.kvHeads(), a.pos[t]);
        }
    }

    /** xb2[T][D]: every (token, query head) attends over its sequence's positions 0..p. */
    private void attend(int l, int tokens, List<SequenceChunk> chunks, MemorySegment slab, KvLayout layout) {
        int heads = c.heads();
        long work = 0;
        for (int t = 0; t < tokens; t++) {
            work += (a.pos[t] + 1L) * 2 * c.dim();
        }
        // A slab confined to this thread (a test's Arena.ofConfined) cannot be read by the pool.
        boolean shared = slab.isAccessibleBy(NOT_THE_OWNER);
        parallel.forRange(tokens * heads, 1, shared ? work : 0, (worker, from, to) -> {
            for (int i = from; i < to; i++) {
                attention.attend(l, i / heads, i % heads, a, a.att[worker], chunks, slab, layout);
            }
        });
    }

    /** xb[T][D] = w2 (silu(w1 xb) * (w3 xb)); hb, hb2 [T][H]. */
    private void ffn(int l, int tokens) {
        int hidden = c.hiddenDim();
        matmul(w.w1(l), c.dim(), hidden, a.xb, tokens, a.hb);
        matmul(w.w3(l), c.dim(), hidden, a.xb, tokens, a.hb2);
        kernels.swiglu(a.hb, 0, a.hb2, 0, tokens * hidden);
        matmul(w.w2(l), hidden, c.dim(), a.hb, tokens, a.xb);
    }

    /** x[T][D] += xb[T][D]. */
    private void residual(int tokens) {
        kernels.add(a.x, 0, a.xb, 0, tokens * c.dim());
    }

    /** Final rmsnorm and classifier for the last token of each chunk that wants logits. */
    private float[][] classify(List<SequenceChunk> chunks) {
        int dim = c.dim();
        int vocab = c.vocabSize();
        int rows = 0;
        for (SequenceChunk ch : chunks) {
            if (ch.wantLogits()) rows++;
        }
        float[][] out = new float[chunks.size()][];
        if (rows == 0) {
            return out;
        }
        a.ensureLogitRows(rows);
        int r = 0;
        int last = -1;
        for (SequenceChunk ch : chunks) {
            last += ch.tokens().length;
            if (ch.wantLogits()) {
                kernels.rmsnorm(a.xLast, r * dim, a.x, last * dim, w.rmsFinal(), dim, EPS);  // xLast[C][D]
                r++;
            }
        }
        matmul(w.classifier(), dim, vocab, a.xLast, rows, a.logits);   // logits[C][V] = xLast cls^T
        r = 0;
        for (int i = 0; i < chunks.size(); i++) {
            if (chunks.get(i).wantLogits()) {
                out[i] = java.util.Arrays.copyOfRange(a.logits, r * vocab, (r + 1) * vocab);
                r++;
            }
        }
        return out;
    }

    /** y[n][out] = x[n][in] W^T, split by output rows over the pool when large enough. */
    private void matmul(MemorySegment weights, int in, int out, float[] x, int n, float[] y) {
        parallel.forRange(out, 4, (long) out * in * n,
                (part, from, to) -> kernels.matmul(weights, in, out, x, n, y, from, to));
    }

    /** Releases the scratch buffers; the checkpoint and the pool are not owned and stay open. */
    @Override
    public void close() {
        a = null;
    }
}
