package io.kvtier.model;

import io.kvtier.model.tensor.FiniteCheck;
import io.kvtier.model.tensor.TensorType;
import io.kvtier.model.tensor.Weight;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.EnumMap;

/**
 * A llama2.c checkpoint ({@code run.c} format), read once into off-heap memory of this process
 * (not the heap; not a mapping of the file). Why not a mapping: a file changed under a mapping
 * changes the weights mid-run, and one truncated under it kills the JVM with SIGBUS in a
 * kernel (a copy, e.g. {@code make-model} or {@code cp} over the file, did exactly that); a
 * private copy-on-write mapping shares the file's pages until written, so it does not protect
 * either. Once loaded, nothing done to the file affects this object. The cost: one read of the
 * file at load and its bytes resident in the process.
 * Every accessor returns a slice, row-major {@code [out][in]} float32 little-endian. The memory
 * belongs to one shared {@link Arena} owned by this object:
 * after {@link #close()} every segment it handed out is invalid.
 *
 * <p>Thread safety: accessors may be called from any thread (the compute pool reads weights
 * concurrently); {@link #close()} must not race with readers.
 */
public final class Checkpoint implements Model {

    private static final ValueLayout.OfFloat FLOAT_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_LE =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final ModelConfig config;
    private final Arena arena;
    private final MemorySegment file;
    private final ArchSpec spec;
    private final Weight tokenEmbedding;
    private final EnumMap<Matrix, Weight[]> matrices = new EnumMap<>(Matrix.class);
    private final MemorySegment[] rmsAtt, rmsFfn;
    private final MemorySegment rmsFinal;
    private final Weight classifier;
    private final DigestCache digests;
    private String modelId;

    private Checkpoint(Path path, ModelConfig config, Arena arena, MemorySegment file, DigestCache digests) {
        this.path = path;
        this.digests = digests;
        this.config = config;
        this.arena = arena;
        this.file = file;
        this.spec = ArchSpec.llama2c(config);
        CheckpointLayout layout = CheckpointLayout.of(config);
        int d = config.dim();
        tokenEmbedding = f32(slice(layout.tensor("token_embedding_table"), 0), config.vocabSize(), d);
        rmsAtt = perLayer(layout.tensor("rms_att_weight"));
        matrices.put(Matrix.Q, perLayer(layout.tensor("wq"), config.qDim(), d));
        matrices.put(Matrix.K, perLayer(layout.tensor("wk"), config.kvDim(), d));
        matrices.put(Matrix.V, perLayer(layout.tensor("wv"), config.kvDim(), d));
        matrices.put(Matrix.O, perLayer(layout.tensor("wo"), d, config.qDim()));
        rmsFfn = perLayer(layout.tensor("rms_ffn_weight"));
        matrices.put(Matrix.GATE, perLayer(layout.tensor("w1"), config.hiddenDim(), d));
        matrices.put(Matrix.DOWN, perLayer(layout.tensor("w2"), d, config.hiddenDim()));
        matrices.put(Matrix.UP, perLayer(layout.tensor("w3"), config.hiddenDim(), d));
        rmsFinal = slice(layout.tensor("rms_final_weight"), 0);
        classifier = config.sharedClassifier() ? tokenEmbedding
                : f32(slice(layout.tensor("wcls"), 0), config.vocabSize(), d);
    }

    /**
     * Reads and validates a checkpoint.
     *
     * @throws ModelFormatException when the file is missing or unreadable, shorter than the
     *         header, has implausible or inconsistent header values, or its size differs from
     *         the size the header implies (truncated, trailing bytes, or a foreign file)
     */
    public static Checkpoint load(Path path) {
        return load(path, DigestCache.none());
    }

    /**
     * The same, with the file's SHA-256 ({@link #modelId()}) remembered in {@code digests}: a
     * 440 MB checkpoint is hashed once, not at every start (nor twice when the launcher's
     * warm-up loads it too).
     */
    public static Checkpoint load(Path path, DigestCache digests) {
        String name = "model file " + path;
        OffHeapFiles.HeadCheck header = (head, size) -> checkSize(name, readHeader(name, head), size);
        return OffHeapFiles.read(path, name, "a llama2.c checkpoint", (int) CheckpointLayout.HEADER_BYTES, header, (arena, file) -> {
            long size = file.byteSize();
            if (size < CheckpointLayout.HEADER_BYTES) {
                throw new ModelFormatException(name + ": " + size + " bytes, shorter than the "
                        + CheckpointLayout.HEADER_BYTES + "-byte llama2.c header");
            }
            ModelConfig config = readHeader(name, file);
            checkSize(name, config, size);
            checkFinite(name, config, file);
            return new Checkpoint(path, config, arena, file, digests);
        });
    }

    /**
     * The vocabulary size in a checkpoint's header, read from its first 28 bytes alone (a check
     * before a long load: the load checks the whole file and hashes it).
     *
     * @return the size, or 0 when the file is unreadable, too short, its header implausible or its
     *         size not the one the header's shape has (the load then says why: a cut file's cut is
     *         the news, not the tokenizer that would not fit it either)
     */
    public static int vocabSizeFromHeader(Path path) {
        byte[] head = OffHeapFiles.firstBytes(path, (int) CheckpointLayout.HEADER_BYTES);
        if (head == null || head.length < CheckpointLayout.HEADER_BYTES) {
            return 0;
        }
        try {
            String name = "model file " + path;
            ModelConfig c = readHeader(name, MemorySegment.ofArray(head));
            checkSize(name, c, java.nio.file.Files.size(path)); // the load's own size check
            return c.vocabSize();
        } catch (ModelFormatException | java.io.IOException e) {
            return 0;
        }
    }

    private static ModelConfig readHeader(String name, MemorySegment file) {
        int[] h = new int[7];
        for (int i = 0; i < 7; i++) {
            h[i] = file.get(INT_LE, (long) i * Integer.BYTES);
        }
        // llama2.c: a negative vocab_size means the classifier is stored separately.
        boolean shared = h[5] > 0;
        int vocab = h[5] == Integer.MIN_VALUE ? 0 : Math.abs(h[5]);
        String problem = ModelConfig.problem(h[0], h[1], h[2], h[3], h[4], vocab, h[6]);
        if (problem != null) {
            throw new ModelFormatException(name + ": " + problem + "; not a llama2.c checkpoint or a corrupt header");
        }
        return new ModelConfig(h[0], h[1], h[2], h[3], h[4], vocab, h[6], shared);
    }

    private static void checkSize(String name, ModelConfig c, long found) {
        CheckpointLayout layout = CheckpointLayout.of(c);
        long expected = layout.fileBytes();
        if (found == expected) {
            return;
        }
        String shape = "header says " + c.layers() + " layers, dim " + c.dim() + ", hidden " + c.hiddenDim()
                + ", vocab " + c.vocabSize() + ", seq_len " + c.seqLen()
                + (c.sharedClassifier() ? ", shared classifier" : ", separate classifier");
        String sizes = " (expected " + String.format("%,d", expected) + " bytes, found "
                + String.format("%,d", found) + ")";
        if (found < expected) {
            CheckpointLayout.Tensor t = layout.tensorAt(found);
            String where = t == null ? "" : t.count() > 1
                    ? " inside tensor " + t.name() + " of layer "
                      + (found - t.byteOffset()) / (t.floatsEach() * Float.BYTES)
                    : " inside tensor " + t.name();
            throw new ModelFormatException(name + ": " + shape + " but the file ends" + where + sizes);
        }
        throw new ModelFormatException(name + ": " + shape + " but the file has "
                + String.format("%,d", found - expected) + " bytes more" + sizes
                + "; trailing garbage or not a checkpoint of this shape");
    }

    /**
     * Every float after the header is finite (a NaN weight turns every logit into NaN and greedy
     * decoding into token 0). Checked at every load: the file is in memory already, and the pass
     * costs tens of milliseconds on the 110M shape.
     */
    private static void checkFinite(String name, ModelConfig c, MemorySegment file) {
        long header = CheckpointLayout.HEADER_BYTES;
        FiniteCheck.Found bad = FiniteCheck.firstNonFinite(TensorType.F32, file.asSlice(header),
                (file.byteSize() - header) / Float.BYTES);
        if (bad == null) {
            return;
        }
        long offset = header + bad.element() * Float.BYTES;
        CheckpointLayout.Tensor t = CheckpointLayout.of(c).tensorAt(offset);
        long inTensor = (offset - t.byteOffset()) / Float.BYTES;
        String where = t.count() > 1 ? t.name() + " of layer " + inTensor / t.floatsEach() : t.name();
        throw new ModelFormatException(name + ": tensor " + where + " holds "
                + (Float.isNaN(file.get(FLOAT_LE, offset)) ? "NaN" : "an infinite value") + " (first at element "
                + inTensor % t.floatsEach() + ")" + "; the weights are damaged (every output would be NaN)");
    }

    private MemorySegment slice(CheckpointLayout.Tensor t, int i) {
        return file.asSlice(t.offsetOf(i), t.floatsEach() * Float.BYTES);
    }

    private static Weight f32(MemorySegment s, int rows, int cols) {
        return new Weight(TensorType.F32, s, rows, cols);
    }

    private Weight[] perLayer(CheckpointLayout.Tensor t, int rows, int cols) {
        Weight[] out = new Weight[t.count()];
        for (int i = 0; i < out.length; i++) {
            out[i] = f32(slice(t, i), rows, cols);
        }
        return out;
    }

    private MemorySegment[] perLayer(CheckpointLayout.Tensor t) {
        MemorySegment[] out = new MemorySegment[t.count()];
        for (int i = 0; i < out.length; i++) {
            out[i] = slice(t, i);
        }
        return out;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public Path path() {
        return path;
    }

    /**
     * Hex SHA-256 of the whole file: names the exact weights (for the KV namespace). Computed
     * on first call (reads the file once), then cached.
     */
    @Override
    public synchronized String modelId() {
        if (modelId == null) {
            modelId = digests.sha256(path, file);
        }
        return modelId;
    }

    @Override
    public ArchSpec spec() {
        return spec;
    }

    @Override
    public Weight tokenEmbedding() {
        return tokenEmbedding;
    }

    @Override
    public Weight matrix(Matrix m, int layer) {
        return matrices.get(m)[layer];
    }

    /** A llama2.c checkpoint has no biases. */
    @Override
    public MemorySegment bias(Matrix m, int layer) {
        return null;
    }

    @Override
    public MemorySegment norm(Norm n, int layer) {
        return switch (n) {
            case ATTENTION -> rmsAtt[layer];
            case FFN -> rmsFfn[layer];
            case Q_HEAD, K_HEAD, POST_ATTENTION, POST_FFN -> null;
        };
    }

    @Override
    public MemorySegment outputNorm() {
        return rmsFinal;
    }

    @Override
    public Weight classifier() {
        return classifier;
    }

    /** Unmaps the file; every segment returned by this checkpoint becomes invalid. */
    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "Checkpoint[" + path + ", " + config + "]";
    }
}
