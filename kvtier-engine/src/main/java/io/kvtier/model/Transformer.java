package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import io.kvtier.model.tensor.QuantMatmul;
import io.kvtier.model.tensor.TensorType;
import io.kvtier.model.tensor.Weight;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;

/**
 * The Llama-family transformer of a {@link Model} (a llama2.c checkpoint or a GGUF file of the
 * {@code llama}, {@code qwen2}, {@code qwen3} or {@code gemma3} family), run one engine step at a time over a
 * batch of chunks of different sequences, with its KV cache in a paged slab.
 *
 * <p>The forward pass follows llama2.c {@code run.c}'s {@code forward}, top to bottom, with the
 * families' differences taken from the model's {@link ArchSpec} (RoPE style, base and factors,
 * q/k/v biases, per-head q/k norms, norm epsilon, and Gemma's embedding scale, GELU feed-forward,
 * post-norms, sliding-window layers and logit softcap), except that every step works on all {@code T}
 * tokens of the batch at once, so each weight matrix is read from memory once per step however
 * many tokens there are. Weights are used in their file encoding ({@link Weight}): F32 through
 * {@link Kernels#matmul}, the others through {@link QuantMatmul} (one or a few rows) or, for
 * batches of a vector of rows or more, {@link PackedMatmul} on rows decoded 8 at a time. Shapes in comments: {@code T}
 * tokens in the step, {@code D} = dim, {@code Q} = heads * headDim, {@code KV} = kvDim, {@code H}
 * = hiddenDim, {@code V} = vocabSize, {@code C} = chunks that want logits.
 *
 * <p>Not thread-safe: one engine thread calls {@link #forward}; the computation itself is spread
 * over the given pool (large matrix products split by output rows, attention by heads).
 */
public final class Transformer implements AutoCloseable {

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A thread that owns nothing: a segment accessible by it is accessible by the pool's workers. */
    private static final Thread NOT_THE_OWNER = Thread.ofVirtual().unstarted(() -> { });

    /**
     * System property ({@code true}/{@code false}, default false) read by the constructors that
     * do not take the choice: the batch-invariant mode, as the CLI's {@code --batch-invariant}
     * sets it before any engine is built. In it each matrix product runs activation row by
     * activation row through the decode kernels (Q8_0-quantized activations for the Q8_0 and
     * Q4_0 weights, F32 rows through {@link Kernels#matvec}), so a token's logits do not depend
     * on the other tokens of its step (batch companions, chunked prefill); attention and the lane
     * sums ({@link io.kvtier.model.tensor.Lanes}) already are independent of them.
     */
    public static final String BATCH_INVARIANT = "kvtier.batchInvariant";

    /** Tokens per thread from which a step's attention is split by token rather than by head. */
    private static final int ATTENTION_TOKENS_PER_THREAD = 2;

    private final Model w;
    private final ModelConfig c;
    private final ArchSpec spec;
    private final float eps;
    private final Kernels kernels;
    private final Parallel parallel;
    private final Rope rope;
    /** RoPE of the sliding-window layers (their own base); {@link #rope} when no layer slides. */
    private final Rope localRope;
    private final PagedAttention attention;
    private final QuantActivations quantActivations;
    /**
     * Every product through the one-row kernels whatever the step's rows ({@link PreparedInput#rowByRow}),
     * so that a sequence's logits have the same bits alone or beside others ({@link #BATCH_INVARIANT}).
     */
    private final boolean batchInvariant;
    /**
     * Element-wise work that follows a product (the residual add, the gated activation) is done
     * by each part on the rows it just computed, inside the product's parallel range, rather than
     * by the calling thread after it; false only to compare the two ({@code StepOverheadComparison}).
     */
    private final boolean fused;
    /** Whether {@link #forward} returns arrays it keeps and overwrites at the next step ({@link #reuseLogitArrays}). */
    private boolean reuseLogits;
    private Activations a;

    /**
     * @param model       the weights (not owned: the caller closes it after this transformer)
     * @param kernels     numeric kernels, usually {@link Kernels#best()}
     * @param computePool pool for the parallel parts of a step (not owned)
     */
    public Transformer(Model model, Kernels kernels, ForkJoinPool computePool) {
        this(model, kernels, computePool, QuantActivations.fromSystemProperty());
    }

    /** As {@link #Transformer(Model, Kernels, ForkJoinPool)} with the decode activations of Q8_0 products chosen. */
    public Transformer(Model model, Kernels kernels, ForkJoinPool computePool, QuantActivations quantActivations) {
        this(model, kernels, computePool, quantActivations, Boolean.getBoolean(BATCH_INVARIANT));
    }

    /** As {@link #Transformer(Model, Kernels, ForkJoinPool, QuantActivations)}, batch-invariant or not ({@link #BATCH_INVARIANT}). */
    public Transformer(Model model, Kernels kernels, ForkJoinPool computePool, QuantActivations quantActivations,
                       boolean batchInvariant) {
        this(model, kernels, new Parallel(Objects.requireNonNull(computePool, "computePool")), quantActivations, true,
                batchInvariant);
    }

    /** With its own hand-off settings, for comparisons of them. */
    Transformer(Model model, Kernels kernels, Parallel parallel) {
        this(model, kernels, parallel, QuantActivations.fromSystemProperty(), true, Boolean.getBoolean(BATCH_INVARIANT));
    }

    /** With its own hand-off settings and, for comparisons, the element-wise work after the products unfused. */
    Transformer(Model model, Kernels kernels, Parallel parallel, boolean fused) {
        this(model, kernels, parallel, QuantActivations.fromSystemProperty(), fused, Boolean.getBoolean(BATCH_INVARIANT));
    }

    private Transformer(Model model, Kernels kernels, Parallel parallel, QuantActivations quantActivations, boolean fused,
                        boolean batchInvariant) {
        this.batchInvariant = batchInvariant;
        this.quantActivations = Objects.requireNonNull(quantActivations, "quantActivations");
        this.fused = fused;
        this.w = Objects.requireNonNull(model, "model");
        this.c = model.config();
        this.spec = model.spec();
        this.eps = spec.normEps();
        this.kernels = batchInvariant ? Objects.requireNonNull(kernels, "kernels").batchInvariant()
                : Objects.requireNonNull(kernels, "kernels");
        this.parallel = parallel;
        this.rope = new Rope(spec, c.headDim());
        this.localRope = spec.gemma().slidingWindow() > 0 ? new Rope(spec, c.headDim(), spec.gemma().localRopeTheta()) : rope;
        this.attention = new PagedAttention(c, this.kernels);
        this.a = new Activations(c, parallel.threads());
    }

    public ModelConfig config() {
        return c;
    }

    public Kernels kernels() {
        return kernels;
    }

    /**
     * From now on {@link #forward} returns logit arrays it keeps and overwrites at the next step
     * (for a caller that samples them at once, as the engine), one sequence's written straight by
     * the classifier, instead of a fresh {@code [vocab]} copy per sequence and step (128 KB each
     * at a 32,000-token vocabulary). The values are the same.
     */
    public void reuseLogitArrays() {
        reuseLogits = true;
    }

    /**
     * One step: runs every token of every chunk, writes its K and V into {@code kvSlab} at its
     * position's slot, and returns, per chunk in order, the logits {@code [vocab]} of its last
     * token when {@link SequenceChunk#wantLogits()}, else null. Each chunk must belong to a
     * different sequence; a token attends to positions 0..p of its own sequence through the
     * block table, earlier tokens of its own chunk included (all K/V of a layer are written
     * before that layer's attention). The KV of every layer is in the one slab ({@link PagedKv#single}).
     *
     * @param kvSlab block {@code b} occupies bytes {@code [b * layout.bytesPerBlock(), (b+1) * layout.bytesPerBlock())}
     * @param layout must match the model's layers, kvHeads and headDim
     * @throws IllegalArgumentException as {@link #forward(List, PagedKv)}
     * @throws IllegalStateException after {@link #close()}
     */
    public float[][] forward(List<SequenceChunk> chunks, MemorySegment kvSlab, KvLayout layout) {
        return forward(chunks, PagedKv.single(kvSlab, layout));
    }

    /**
     * One step over KV kept per group: as {@link #forward(List, MemorySegment, KvLayout)}, but layer
     * {@code l}'s K and V go to (and are read from) the slab of its group, through the chunk's
     * block table of that group. A sliding-window group's table needs entries only from the block
     * of the chunk's first query's window on.
     *
     * @throws IllegalArgumentException for groups that do not fit the model (layers, kvHeads, headDim),
     *         a token id outside the vocabulary, a position at or beyond
     *         seqLen, a block table that does not cover the positions its group reads and writes or
     *         names a block outside its slab
     * @throws IllegalStateException after {@link #close()}
     */
    public float[][] forward(List<SequenceChunk> chunks, PagedKv kv) {
        if (a == null) {
            throw new IllegalStateException("transformer is closed");
        }
        int tokens = gather(chunks, kv);
        embed(tokens);                                   // x[T][D] = embedding[token]
        angles(rope, a.cos, a.sin, tokens);              // every token's RoPE angles, once for all layers
        if (localRope != rope) {
            angles(localRope, a.localCos, a.localSin, tokens);
        }
        for (int l = 0; l < c.layers(); l++) {
            int g = kv.groupOfLayer()[l];                 // the layer's KV: layer li of group g's slab
            int li = kv.layerInGroup()[l];
            MemorySegment slab = kv.slabs()[g];
            KvLayout layout = kv.layouts()[g];
            rmsnorm(a.x, a.xb, w.norm(Model.Norm.ATTENTION, l), tokens);  // xb[T][D] = rmsnorm(x) * attn_norm
            if (fusesAttention(tokens, slab)) {
                attentionByKvHead(l, li, g, tokens, chunks, slab, layout);  // all of the below, kv head by kv head
            } else {
                qkv(l, tokens);                           // q[T][Q], k[T][KV], v[T][KV] (+ biases)
                if (spec.qkNorm()) {
                    headNorms(l, tokens);                 // rmsnorm of every q and k head
                }
                rotary(l, tokens, 0, c.kvHeads());        // rotate q and k in place
                attention.writeKv(li, g, tokens, a, chunks, slab, layout);
                attend(l, li, g, tokens, chunks, slab, layout);  // xb2[T][Q] = attention over the slab (its window)
            }
            projectAndAdd(w.matrix(Model.Matrix.O, l), a.xb2, Model.Norm.POST_ATTENTION, l, tokens);  // x += xb2 wo^T
            rmsnorm(a.x, a.xb, w.norm(Model.Norm.FFN, l), tokens);     // xb[T][D] = rmsnorm(x) * ffn_norm
            ffn(l, tokens);                               // hb[T][H] = act(w1 xb) * w3 xb
            projectAndAdd(w.matrix(Model.Matrix.DOWN, l), a.hb, Model.Norm.POST_FFN, l, tokens);      // x += hb w2^T
        }
        return classify(chunks);                          // [chunks][V] or null
    }

    /** Validates the batch ({@link BatchChecks}) and fills the per-token arrays; returns T. */
    private int gather(List<SequenceChunk> chunks, PagedKv kv) {
        int tokens = BatchChecks.tokens(chunks, kv, c, spec);
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

    /** x[t] = token embedding row of token[t] (decoded from its encoding), times Gemma's scale. */
    private void embed(int tokens) {
        int dim = c.dim();
        Weight emb = w.tokenEmbedding();
        float scale = spec.gemma().embedScale();
        for (int t = 0; t < tokens; t++) {
            if (emb.type() == TensorType.F32) {
                MemorySegment.copy(emb.data(), F32, (long) a.token[t] * dim * Float.BYTES, a.x, t * dim, dim);
            } else {
                QuantMatmul.row(emb, a.token[t], a.x, t * dim);
            }
        }
        if (scale != 1f) {
            for (int i = 0; i < tokens * dim; i++) {
                a.x[i] *= scale;
            }
        }
    }

    /**
     * x[T][D] += in[T][cols] W^T, through xb[T][D]; with Gemma's post norm {@code n} (xb =
     * rmsnorm(xb) * norm, a reduction over whole rows) between the product and the add. Without a
     * post norm the add is done by each part on the rows it computed (one hand-off for both).
     */
    private void projectAndAdd(Weight wt, float[] in, Model.Norm n, int l, int tokens) {
        if (spec.gemma().postNorms()) {
            matmul(wt, in, tokens, a.xb);
            rmsnorm(a.xb, a.xb, w.norm(n, l), tokens);
            residual(0, c.dim(), tokens);
        } else {
            matmuls(in, tokens, new Weight[] {wt}, new float[][] {a.xb}, (from, to) -> residual(from, to, tokens));
        }
    }

    /** out[t] = rmsnorm(in[t]) * weight, for every token; [T][D]. */
    private void rmsnorm(float[] in, float[] out, MemorySegment weight, int tokens) {
        for (int t = 0; t < tokens; t++) {
            kernels.rmsnorm(out, t * c.dim(), in, t * c.dim(), weight, c.dim(), eps);
        }
    }

    /** q[T][Q] = xb wq^T + bq, k[T][KV] = xb wk^T + bk, v[T][KV] = xb wv^T + bv (biases when the model has them). */
    private void qkv(int l, int tokens) {
        matmuls(a.xb, tokens, new Weight[] {w.matrix(Model.Matrix.Q, l), w.matrix(Model.Matrix.K, l),
                w.matrix(Model.Matrix.V, l)}, new float[][] {a.q, a.k, a.v});
        addBias(Model.Matrix.Q, l, tokens, a.q, 0, c.qDim());
        addBias(Model.Matrix.K, l, tokens, a.k, 0, c.kvDim());
        addBias(Model.Matrix.V, l, tokens, a.v, 0, c.kvDim());
    }

    /** out[t][from..to-1] += the bias of matrix {@code m} of layer {@code l}, when the model has one. */
    private void addBias(Model.Matrix m, int l, int tokens, float[] out, int from, int to) {
        Weight wt = w.matrix(m, l);
        MemorySegment bias = w.bias(m, l);
        if (bias != null) {
            int n = wt.rows();
            for (int t = 0; t < tokens; t++) {
                for (int i = from; i < to; i++) {
                    out[t * n + i] += bias.getAtIndex(F32, i);
                }
            }
        }
    }

    /** In place: every query head and key head of every token = rmsnorm(head) * its norm weight [headDim]. */
    private void headNorms(int l, int tokens) {
        headNorms(l, tokens, 0, c.kvHeads());
    }

    /** As {@link #headNorms(int, int)} for key heads {@code kvFrom..kvTo-1} and their query heads. */
    private void headNorms(int l, int tokens, int kvFrom, int kvTo) {
        int hd = c.headDim();
        MemorySegment qn = w.norm(Model.Norm.Q_HEAD, l);
        MemorySegment kn = w.norm(Model.Norm.K_HEAD, l);
        for (int t = 0; t < tokens; t++) {
            for (int h = kvFrom * c.kvGroup(); h < kvTo * c.kvGroup(); h++) {
                int off = t * c.qDim() + h * hd;
                kernels.rmsnorm(a.q, off, a.q, off, qn, hd, eps);
            }
            for (int h = kvFrom; h < kvTo; h++) {
                int off = t * c.kvDim() + h * hd;
                kernels.rmsnorm(a.k, off, a.k, off, kn, hd, eps);
            }
        }
    }

    /** cos[t][..], sin[t][..] = the rotation angles of every token's position ([T][ropeDim/2], stride headDim/2). */
    private void angles(Rope rope, float[] cos, float[] sin, int tokens) {
        int stride = c.headDim() / 2;
        for (int t = 0; t < tokens; t++) {
            rope.angles(a.pos[t], cos, sin, t * stride);
        }
    }

    /**
     * Rotary embedding of key heads {@code kvFrom..kvTo-1} and their query heads at every token's
     * position, by the angles from {@link #angles} (the layer's: local in a sliding-window layer).
     */
    private void rotary(int l, int tokens, int kvFrom, int kvTo) {
        Rope r = spec.window(l) > 0 ? localRope : rope;
        float[] cos = spec.window(l) > 0 ? a.localCos : a.cos;
        float[] sin = spec.window(l) > 0 ? a.localSin : a.sin;
        int stride = c.headDim() / 2;
        int group = c.kvGroup();
        for (int t = 0; t < tokens; t++) {
            r.rotate(a.q, t * c.qDim() + kvFrom * group * c.headDim(), (kvTo - kvFrom) * group, cos, sin, t * stride);
            r.rotate(a.k, t * c.kvDim() + kvFrom * c.headDim(), kvTo - kvFrom, cos, sin, t * stride);
        }
    }

    /**
     * Whether a step's q/k/v products and attention run as one range, kv head by kv head: when
     * attention would be split by head anyway (few tokens), there are kv heads enough for every
     * thread (else, with one or two kv heads, the products would not be split as well as by
     * rows), the pool may read the slab, and a head's rows are whole groups of 4 (so that its rows
     * are computed as in the full product).
     */
    private boolean fusesAttention(int tokens, MemorySegment slab) {
        return fused && tokens < ATTENTION_TOKENS_PER_THREAD * parallel.threads() && c.headDim() % 4 == 0
                && c.kvHeads() >= 2 * parallel.threads() && slab.isAccessibleBy(NOT_THE_OWNER);
    }

    /**
     * One hand-off for the attention block of layer {@code l} (model layer; {@code li} of group
     * {@code g}'s slab): each part takes whole kv heads and, for them, computes their q rows (the
     * query heads of the kv head), k and v rows (+ biases), the head norms, the rotation, writes
     * their K and V into the slab and attends: xb2[T][Q]. A kv head's queries read only its own K
     * and V, so no part waits for another; the values are those of the separate steps.
     */
    private void attentionByKvHead(int l, int li, int g, int tokens, List<SequenceChunk> chunks, MemorySegment slab,
                                   KvLayout layout) {
        Weight[] ws = {w.matrix(Model.Matrix.Q, l), w.matrix(Model.Matrix.K, l), w.matrix(Model.Matrix.V, l)};
        float[][] ys = {a.q, a.k, a.v};
        int hd = c.headDim();
        int group = c.kvGroup();
        int window = spec.window(l);
        long work = (long) (c.qDim() + 2 * c.kvDim()) * c.dim() * tokens;
        for (int t = 0; t < tokens; t++) {
            work += (window > 0 ? Math.min(window, a.pos[t] + 1L) : a.pos[t] + 1L) * 2 * c.qDim();
        }
        PreparedInput p = prepare(a.xb, tokens, ws, kernels, a, quantActivations);
        parallel.forRange(c.kvHeads(), 1, work, (worker, from, to) -> {
            int[] lo = {from * group * hd, from * hd, from * hd};   // rows of q, k, v
            int[] hi = {to * group * hd, to * hd, to * hd};
            for (int i = 0; i < ws.length; i++) {
                p.rows(ws[i], kernels, ys[i], lo[i], hi[i]);
                addBias(MATRICES_QKV[i], l, tokens, ys[i], lo[i], hi[i]);
            }
            if (spec.qkNorm()) {
                headNorms(l, tokens, from, to);
            }
            rotary(l, tokens, from, to);
            attention.writeKv(li, g, tokens, a, chunks, slab, layout, from, to);
            for (int t = 0; t < tokens; t++) {
                int n = window > 0 ? Math.min(window, a.pos[t] + 1) : a.pos[t] + 1;
                attention.attend(li, g, window, t, from * group, to * group, a, a.att(worker, (to - from) * group * n),
                        chunks, slab, layout);
            }
        });
    }

    private static final Model.Matrix[] MATRICES_QKV = {Model.Matrix.Q, Model.Matrix.K, Model.Matrix.V};

    /**
     * xb2[T][Q]: every (token, query head) attends over its sequence's positions 0..p, or only the
     * last {@code window} of them in a sliding-window layer; model layer {@code l} is layer {@code li}
     * of group {@code g}'s slab.
     */
    private void attend(int l, int li, int g, int tokens, List<SequenceChunk> chunks, MemorySegment slab, KvLayout layout) {
        int heads = c.heads();
        int window = spec.window(l);
        long work = 0;
        for (int t = 0; t < tokens; t++) {
            work += (window > 0 ? Math.min(window, a.pos[t] + 1L) : a.pos[t] + 1L) * 2 * c.qDim();
        }
        // A slab confined to this thread (a test's Arena.ofConfined) cannot be read by the pool.
        boolean shared = slab.isAccessibleBy(NOT_THE_OWNER);
        // An item is a token with all its heads (its context read once, row by row) when there are
        // tokens enough to keep every thread busy; else a single head, so that one long sequence
        // is still split. The values are the same either way (PagedAttention.attend).
        int perItem = tokens >= ATTENTION_TOKENS_PER_THREAD * parallel.threads() ? heads : 1;
        int items = tokens * (heads / perItem);
        parallel.forRange(items, 1, shared ? work : 0, (worker, from, to) -> {
            for (int i = from; i < to; i++) {
                int t = i * perItem / heads;
                int h = i * perItem % heads;
                int n = window > 0 ? Math.min(window, a.pos[t] + 1) : a.pos[t] + 1;
                attention.attend(li, g, window, t, h, h + perItem, a, a.att(worker, perItem * n), chunks, slab, layout);
            }
        });
    }

    /**
     * hb[T][H] = act(w1 xb) * (w3 xb), act = SiLU or (Gemma) GELU(tanh); hb2 [T][H] scratch. Each
     * part computes the same rows of w1 and w3 and applies the activation to them (element-wise).
     */
    private void ffn(int l, int tokens) {
        int hidden = c.hiddenDim();
        boolean gelu = spec.gemma().geluFfn();
        matmuls(a.xb, tokens, new Weight[] {w.matrix(Model.Matrix.GATE, l), w.matrix(Model.Matrix.UP, l)},
                new float[][] {a.hb, a.hb2}, (from, to) -> {
                    for (int t = 0; t < tokens; t++) {
                        int off = t * hidden + from;
                        if (gelu) {
                            Gelu.geglu(a.hb, off, a.hb2, off, to - from);
                        } else {
                            kernels.swiglu(a.hb, off, a.hb2, off, to - from);
                        }
                    }
                });
    }

    /** x[t][from..to-1] += xb[t][from..to-1] for every token. */
    private void residual(int from, int to, int tokens) {
        for (int t = 0; t < tokens; t++) {
            int off = t * c.dim() + from;
            kernels.add(a.x, off, a.xb, off, to - from);
        }
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
                kernels.rmsnorm(a.xLast, r * dim, a.x, last * dim, w.outputNorm(), dim, eps);  // xLast[C][D]
                r++;
            }
        }
        // logits[C][V] = xLast cls^T; one row straight into the array returned when it is kept
        boolean direct = reuseLogits && rows == 1;
        float[] y = direct ? a.logitArray(0) : a.logits;
        float[][] rowArrays = new float[rows][];
        r = 0;
        for (int i = 0; i < chunks.size(); i++) {
            if (chunks.get(i).wantLogits()) {
                out[i] = direct ? y : reuseLogits ? a.logitArray(r) : new float[vocab];
                rowArrays[r++] = out[i];
            }
        }
        float cap = spec.gemma().finalLogitSoftcap();
        // Each part caps and copies out the columns it computed, while they are in its cache: a
        // step of 32 sequences copies 4 MB of logits, which the calling thread did alone after the product.
        matmuls(a.xLast, rows, new Weight[] {w.classifier()}, new float[][] {y}, (from, to) -> {
            for (int row = 0; row < rowArrays.length; row++) {
                int off = row * vocab;
                if (cap > 0) {
                    for (int i = off + from; i < off + to; i++) {
                        y[i] = cap * (float) Math.tanh(y[i] / cap);
                    }
                }
                if (!direct) {
                    System.arraycopy(y, off + from, rowArrays[row], from, to - from);
                }
            }
        });
        return out;
    }

    /** y[n][rows] = x[n][cols] W^T, split by output rows over the pool when large enough. */
    private void matmul(Weight wt, float[] x, int n, float[] y) {
        matmuls(x, n, new Weight[] {wt}, new float[][] {y});
    }

    /** Element-wise work on output rows {@code from..to-1} (of every token) of products just computed. */
    @FunctionalInterface
    private interface RowsDone {
        void apply(int from, int to);
    }

    /**
     * {@code ys[i][n][rows] = x[n][cols] ws[i]^T} for matrices of the same row count, then
     * {@code done} on the rows: each part computes rows {@code from..to-1} (a multiple of {@link #rowUnit}) of
     * every matrix and at once applies {@code done} to them, inside the one hand-off (unless
     * {@link #fused} is off: then the caller applies it to all rows after the range).
     */
    private void matmuls(float[] x, int n, Weight[] ws, float[][] ys, RowsDone done) {
        int rows = ws[0].rows();
        long work = 0;
        for (Weight wt : ws) {
            if (wt.rows() != rows) {
                throw new IllegalArgumentException("matrices of " + rows + " and " + wt.rows() + " rows");
            }
            work += (long) wt.rows() * wt.cols() * n;
        }
        PreparedInput p = prepare(x, n, ws, kernels, a, quantActivations);
        int unit = rowUnit(ws);
        parallel.forRange((rows + unit - 1) / unit, 1, work, (worker, from, to) -> {
            int lo = from * unit;
            int hi = Math.min(rows, to * unit);
            for (int i = 0; i < ws.length; i++) {
                p.rows(ws[i], kernels, ys[i], lo, hi);
            }
            if (fused) {
                done.apply(lo, hi);
            }
        });
        if (!fused) {
            done.apply(0, rows);
        }
    }

    /**
     * {@code ys[i][n][rows_i] = x[n][cols] ws[i]^T} for matrices that read the same input (q, k, v;
     * gate, up), in one hand-off to the pool: the rows of all of them are one range, cut into
     * parts at multiples of {@link #rowUnit} rows of each matrix (so that every row is computed the same way
     * whatever the thread count; the kernels treat groups of 4 rows and a remainder differently).
     */
    private void matmuls(float[] x, int n, Weight[] ws, float[][] ys) {
        int unit = rowUnit(ws);
        int[] start = new int[ws.length + 1];   // first group of unit rows of each matrix
        long work = 0;
        for (int i = 0; i < ws.length; i++) {
            start[i + 1] = start[i] + (ws[i].rows() + unit - 1) / unit;
            work += (long) ws[i].rows() * ws[i].cols() * n;
        }
        PreparedInput p = prepare(x, n, ws, kernels, a, quantActivations);
        parallel.forRange(start[ws.length], 1, work, (worker, from, to) -> {
            for (int i = 0; i < ws.length; i++) {
                int lo = Math.max(from, start[i]) - start[i];
                int hi = Math.min(to, start[i + 1]) - start[i];
                if (lo < hi) {
                    p.rows(ws[i], kernels, ys[i], lo * unit, Math.min(ws[i].rows(), hi * unit));
                }
            }
        });
    }

    /** The input of products with {@code ws}: {@link PreparedInput#rowByRow} in the batch-invariant mode, else {@link PreparedInput#of}. */
    private PreparedInput prepare(float[] x, int n, Weight[] ws, Kernels kernels, Activations a, QuantActivations activations) {
        return batchInvariant ? PreparedInput.rowByRow(x, n, ws, a, activations) : PreparedInput.of(x, n, ws, kernels, a, activations);
    }

    /** Whether this transformer runs in the batch-invariant mode ({@link #BATCH_INVARIANT}). */
    public boolean batchInvariant() {
        return batchInvariant;
    }

    /**
     * Rows a part of a product's range starts at a multiple of: 4 (the kernels treat groups of 4
     * rows and a remainder differently), or an interleaved weight's {@link Weight#rowGroup} (16
     * at 512-bit vectors), so that no part computes a cut group.
     */
    private static int rowUnit(Weight[] ws) {
        int unit = 4;
        for (Weight w : ws) {
            unit = Math.max(unit, w.rowGroup());
        }
        return unit;
    }

    /** Releases the scratch buffers; the model and the pool are not owned and stay open. */
    @Override
    public void close() {
        a = null;
    }
}
