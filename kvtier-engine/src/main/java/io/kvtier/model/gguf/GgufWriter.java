package io.kvtier.model.gguf;

import io.kvtier.model.ModelConfig;
import io.kvtier.model.tensor.ScalarQuant;
import io.kvtier.model.tensor.TensorType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.SplittableRandom;

/**
 * Writes a random-weight GGUF v3 model of the {@code llama} family (tied output, no tokenizer
 * metadata: for speed measurements with token ids), its matrices in one {@link TensorType}
 * and its norms F32. The weights are the values {@code CheckpointWriter.writeRandom} draws for
 * the same shape and seed, in the same order (matrices N(0, 0.02), norms 1.0), so an F32 GGUF
 * and a llama2.c checkpoint of one seed compute the same function.
 */
public final class GgufWriter {

    private static final int ALIGNMENT = 32;
    private static final double WEIGHT_STD = 0.02;

    private GgufWriter() {
    }

    /** One tensor to write: GGUF name, rows x cols (1 row for vectors), encoding, data offset. */
    private record Entry(String name, int rows, int cols, TensorType type, long offset) {
        long bytes() {
            return type.rowBytes(cols) * rows;
        }
    }

    /**
     * Writes {@code out}, replacing it atomically ({@link io.kvtier.model.AtomicReplace}).
     *
     * @throws IllegalArgumentException when {@code type} cannot be written or a row of the shape
     *         is not a whole number of its blocks
     * @throws UncheckedIOException when the file cannot be written
     */
    public static void writeRandom(Path out, ModelConfig c, TensorType type, long seed) {
        io.kvtier.model.AtomicReplace.replace(out, "GGUF file", tmp -> writeRandomTo(tmp, c, type, seed));
    }

    private static void writeRandomTo(Path out, ModelConfig c, TensorType type, long seed) throws IOException {
        if (!ScalarQuant.canEncode(type)) {
            throw new IllegalArgumentException("make-model writes F32, F16, BF16, Q8_0 or Q4_0, not " + type);
        }
        for (int cols : new int[] {c.dim(), c.hiddenDim(), c.qDim()}) {
            type.rowBytes(cols);  // throws for a width that is not a whole number of blocks
        }
        int d = c.dim();
        // Tensors in llama2.c's draw order: embedding, attn norms, wq, wk, wv, wo, ffn norms, w1, w2, w3, final norm.
        LinkedHashMap<String, Entry> entries = new LinkedHashMap<>();
        long[] at = {0};
        java.util.function.BiConsumer<String, int[]> add = (name, rc) -> {
            TensorType t = rc[0] == 1 ? TensorType.F32 : type;
            Entry e = new Entry(name, rc[0], rc[1], t, at[0]);
            entries.put(name, e);
            at[0] = (at[0] + e.bytes() + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        };
        add.accept("token_embd.weight", new int[] {c.vocabSize(), d});
        String[][] perLayer = {{"attn_norm", "1", "" + d}, {"attn_q", "" + c.qDim(), "" + d},
            {"attn_k", "" + c.kvDim(), "" + d}, {"attn_v", "" + c.kvDim(), "" + d}, {"attn_output", "" + d, "" + c.qDim()},
            {"ffn_norm", "1", "" + d}, {"ffn_gate", "" + c.hiddenDim(), "" + d}, {"ffn_down", "" + d, "" + c.hiddenDim()},
            {"ffn_up", "" + c.hiddenDim(), "" + d}};
        for (String[] p : perLayer) {
            for (int l = 0; l < c.layers(); l++) {
                add.accept("blk." + l + "." + p[0] + ".weight", new int[] {Integer.parseInt(p[1]), Integer.parseInt(p[2])});
            }
        }
        add.accept("output_norm.weight", new int[] {1, d});

        ByteBuffer header = header(c, type, entries.values());
        long dataStart = (header.remaining() + ALIGNMENT - 1L) / ALIGNMENT * ALIGNMENT;
        SplittableRandom random = new SplittableRandom(seed);
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            writeFully(ch, header, 0);
            for (Entry e : entries.values()) {
                boolean norm = e.rows() == 1;
                float[] row = new float[e.cols()];
                ByteBuffer buf = ByteBuffer.allocate((int) e.type().rowBytes(e.cols())).order(ByteOrder.LITTLE_ENDIAN);
                for (int r = 0; r < e.rows(); r++) {
                    for (int i = 0; i < row.length; i++) {
                        row[i] = norm ? 1.0f : (float) (random.nextGaussian() * WEIGHT_STD);
                    }
                    buf.clear();
                    ScalarQuant.encode(e.type(), row, 0, row.length, buf);
                    buf.flip();
                    writeFully(ch, buf, dataStart + e.offset() + r * e.type().rowBytes(e.cols()));
                }
            }
            ch.truncate(dataStart + at[0]);
            if (ch.size() < dataStart + at[0]) {
                writeFully(ch, ByteBuffer.allocate(1), dataStart + at[0] - 1);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write GGUF model " + out, e);
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }

    private static ByteBuffer header(ModelConfig c, TensorType type, java.util.Collection<Entry> tensors) {
        ByteBuffer b = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0x46554747).putInt(3).putLong(tensors.size()).putLong(12);
        kvString(b, "general.architecture", "llama");
        kvString(b, "general.name", "kvtier make-model random weights");
        kvU32(b, "general.file_type", switch (type) {
            case F32 -> 0;
            case F16 -> 1;
            case Q4_0 -> 2;
            case Q8_0 -> 7;
            case BF16 -> 32;
            default -> throw new IllegalArgumentException(type.toString());
        });
        kvU32(b, "llama.context_length", c.seqLen());
        kvU32(b, "llama.embedding_length", c.dim());
        kvU32(b, "llama.block_count", c.layers());
        kvU32(b, "llama.feed_forward_length", c.hiddenDim());
        kvU32(b, "llama.attention.head_count", c.heads());
        kvU32(b, "llama.attention.head_count_kv", c.kvHeads());
        kvF32(b, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
        kvF32(b, "llama.rope.freq_base", 10000f);
        kvU32(b, "llama.rope.dimension_count", c.headDim());
        for (Entry e : tensors) {
            string(b, e.name());
            if (e.rows() == 1) {
                b.putInt(1).putLong(e.cols());
            } else {
                b.putInt(2).putLong(e.cols()).putLong(e.rows());
            }
            b.putInt(e.type().ggmlId()).putLong(e.offset());
        }
        int end = b.position();
        b.position((end + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT);
        b.flip();
        return b;
    }

    private static void string(ByteBuffer b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        b.putLong(bytes.length).put(bytes);
    }

    private static void kvString(ByteBuffer b, String key, String v) {
        string(b, key);
        b.putInt(8);
        string(b, v);
    }

    private static void kvU32(ByteBuffer b, String key, int v) {
        string(b, key);
        b.putInt(4).putInt(v);
    }

    private static void kvF32(ByteBuffer b, String key, float v) {
        string(b, key);
        b.putInt(6).putFloat(v);
    }
}
