package io.kvtier.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

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
public final class Checkpoint implements AutoCloseable {

    private static final ValueLayout.OfInt INT_LE =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final ModelConfig config;
    private final Arena arena;
    private final MemorySegment file;
    private final MemorySegment tokenEmbedding;
    private final MemorySegment[] rmsAtt, wq, wk, wv, wo, rmsFfn, w1, w2, w3;
    private final MemorySegment rmsFinal;
    private final MemorySegment classifier;
    private volatile String modelId;

    private Checkpoint(Path path, ModelConfig config, Arena arena, MemorySegment file) {
        this.path = path;
        this.config = config;
        this.arena = arena;
        this.file = file;
        CheckpointLayout layout = CheckpointLayout.of(config);
        tokenEmbedding = slice(layout.tensor("token_embedding_table"), 0);
        rmsAtt = perLayer(layout.tensor("rms_att_weight"));
        wq = perLayer(layout.tensor("wq"));
        wk = perLayer(layout.tensor("wk"));
        wv = perLayer(layout.tensor("wv"));
        wo = perLayer(layout.tensor("wo"));
        rmsFfn = perLayer(layout.tensor("rms_ffn_weight"));
        w1 = perLayer(layout.tensor("w1"));
        w2 = perLayer(layout.tensor("w2"));
        w3 = perLayer(layout.tensor("w3"));
        rmsFinal = slice(layout.tensor("rms_final_weight"), 0);
        classifier = config.sharedClassifier() ? tokenEmbedding : slice(layout.tensor("wcls"), 0);
    }

    /**
     * Reads and validates a checkpoint.
     *
     * @throws ModelFormatException when the file is missing or unreadable, shorter than the
     *         header, has implausible or inconsistent header values, or its size differs from
     *         the size the header implies (truncated, trailing bytes, or a foreign file)
     */
    public static Checkpoint load(Path path) {
        String name = "model file " + path;
        if (Files.isDirectory(path)) {
            throw new ModelFormatException(name + ": is a directory, expected a llama2.c checkpoint");
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < CheckpointLayout.HEADER_BYTES) {
                throw new ModelFormatException(name + ": " + size + " bytes, shorter than the "
                        + CheckpointLayout.HEADER_BYTES + "-byte llama2.c header");
            }
            MemorySegment file = readAll(name, path, ch, size, arena);
            ModelConfig config = readHeader(name, file);
            checkSize(name, config, size);
            return new Checkpoint(path, config, arena, file);
        } catch (NoSuchFileException e) {
            arena.close();
            throw new ModelFormatException(name + ": not found", e);
        } catch (IOException e) {
            arena.close();
            throw new ModelFormatException(name + ": cannot be read (" + e + ")", e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * The whole file in fresh off-heap memory (a plain native segment: the kernels read weights
     * and the KV slab through the same segment class, which keeps the JIT's vector loads
     * monomorphic). A file whose size or modification time changes while it is read is refused:
     * the copy could mix two versions.
     */
    private static MemorySegment readAll(String name, Path path, FileChannel ch, long size, Arena arena) throws IOException {
        java.nio.file.attribute.FileTime before = Files.getLastModifiedTime(path);
        MemorySegment file = io.kvtier.memory.ReservedMemory.reserve(arena, size);
        long piece = 64L << 20;
        for (long off = 0; off < size; ) {
            java.nio.ByteBuffer buf = file.asSlice(off, Math.min(piece, size - off)).asByteBuffer();
            while (buf.hasRemaining()) {
                if (ch.read(buf, off + buf.position()) < 0) {
                    throw new ModelFormatException(name + ": shrank to " + (off + buf.position()) + " bytes while being read");
                }
            }
            off += buf.capacity();
        }
        if (ch.size() != size || !Files.getLastModifiedTime(path).equals(before)) {
            throw new ModelFormatException(name + ": changed while being read; try again once it is written");
        }
        return file;
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

    private MemorySegment slice(CheckpointLayout.Tensor t, int i) {
        return file.asSlice(t.offsetOf(i), t.floatsEach() * Float.BYTES);
    }

    private MemorySegment[] perLayer(CheckpointLayout.Tensor t) {
        MemorySegment[] out = new MemorySegment[t.count()];
        for (int i = 0; i < out.length; i++) {
            out[i] = slice(t, i);
        }
        return out;
    }

    public ModelConfig config() {
        return config;
    }

    public Path path() {
        return path;
    }

    /**
     * Hex SHA-256 of the whole file: names the exact weights (for the KV namespace). Computed
     * on first call (reads the file once), then cached.
     */
    public String modelId() {
        String id = modelId;
        if (id == null) {
            synchronized (this) {
                id = modelId;
                if (id == null) {
                    modelId = id = sha256(file);
                }
            }
        }
        return id;
    }

    private static String sha256(MemorySegment seg) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            long chunk = 1 << 20;
            for (long off = 0; off < seg.byteSize(); off += chunk) {
                md.update(seg.asSlice(off, Math.min(chunk, seg.byteSize() - off)).asByteBuffer());
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    /** Token embedding, {@code [vocab][dim]}. */
    public MemorySegment tokenEmbedding() {
        return tokenEmbedding;
    }

    /** RMS weight before attention, {@code [dim]}. */
    public MemorySegment rmsAtt(int layer) {
        return rmsAtt[layer];
    }

    /** Query projection, {@code [heads*headDim][dim]}. */
    public MemorySegment wq(int layer) {
        return wq[layer];
    }

    /** Key projection, {@code [kvHeads*headDim][dim]}. */
    public MemorySegment wk(int layer) {
        return wk[layer];
    }

    /** Value projection, {@code [kvHeads*headDim][dim]}. */
    public MemorySegment wv(int layer) {
        return wv[layer];
    }

    /** Attention output projection, {@code [dim][heads*headDim]}. */
    public MemorySegment wo(int layer) {
        return wo[layer];
    }

    /** RMS weight before the feed-forward layer, {@code [dim]}. */
    public MemorySegment rmsFfn(int layer) {
        return rmsFfn[layer];
    }

    /** Feed-forward gate projection, {@code [hidden][dim]}. */
    public MemorySegment w1(int layer) {
        return w1[layer];
    }

    /** Feed-forward down projection, {@code [dim][hidden]}. */
    public MemorySegment w2(int layer) {
        return w2[layer];
    }

    /** Feed-forward up projection, {@code [hidden][dim]}. */
    public MemorySegment w3(int layer) {
        return w3[layer];
    }

    /** Final RMS weight, {@code [dim]}. */
    public MemorySegment rmsFinal() {
        return rmsFinal;
    }

    /** Classifier, {@code [vocab][dim]}; the token embedding itself when shared. */
    public MemorySegment classifier() {
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
