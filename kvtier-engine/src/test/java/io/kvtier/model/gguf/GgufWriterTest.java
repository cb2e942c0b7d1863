package io.kvtier.model.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.model.Checkpoint;
import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.DigestCache;
import io.kvtier.model.Kernels;
import io.kvtier.model.LogitsDriver;
import io.kvtier.model.Model;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.Models;
import io.kvtier.model.Transformer;
import io.kvtier.model.tensor.QuantMatmul;
import io.kvtier.model.tensor.ScalarDequant;
import io.kvtier.model.tensor.ScalarQuant;
import io.kvtier.model.tensor.TensorType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@code make-model --format gguf}: files that load, and weights that are the llama2.c writer's draw. */
class GgufWriterTest {

    static final ModelConfig SHAPE = new ModelConfig(64, 96, 2, 4, 2, 64, 32, true);

    @TempDir
    Path tmp;

    /** An F32 GGUF and a llama2.c checkpoint of one seed give bit-identical logits. */
    @Test
    void f32GgufComputesExactlyWhatTheCheckpointOfTheSameSeedComputes() {
        Path bin = tmp.resolve("m.bin");
        Path gguf = tmp.resolve("m.gguf");
        CheckpointWriter.writeRandom(bin, SHAPE, 5);
        GgufWriter.writeRandom(gguf, SHAPE, TensorType.F32, 5);
        ForkJoinPool pool = new ForkJoinPool(2);
        try (Model a = Checkpoint.load(bin); Model b = Models.load(gguf, new DigestCache(tmp.resolve("d")));
             Transformer ta = new Transformer(a, Kernels.best(), pool); Transformer tb = new Transformer(b, Kernels.best(), pool);
             LogitsDriver da = new LogitsDriver(ta, 16, 32); LogitsDriver db = new LogitsDriver(tb, 16, 32)) {
            assertThat(b).isInstanceOf(GgufModel.class);
            assertThat(b.config()).isEqualTo(a.config());
            for (int tok : new int[] {1, 17, 63, 5, 5, 40}) {
                assertThat(db.feed(tok)).containsExactly(da.feed(tok));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Quantized files hold the F32 draw within the type's rounding (half a step for Q8_0, a step for Q4_0). */
    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"F16", "BF16", "Q8_0", "Q4_0"})
    void quantizedFilesHoldTheDrawWithinTheirRounding(TensorType type) {
        Path f32 = tmp.resolve("f32.gguf");
        Path q = tmp.resolve(type + ".gguf");
        GgufWriter.writeRandom(f32, SHAPE, TensorType.F32, 9);
        GgufWriter.writeRandom(q, SHAPE, type, 9);
        DigestCache cache = new DigestCache(tmp.resolve("d"));
        try (GgufModel a = GgufModel.load(f32, cache); GgufModel b = GgufModel.load(q, cache)) {
            assertThat(b.tokenEmbedding().type()).isEqualTo(type);
            assertThat(b.matrix(Model.Matrix.DOWN, 1).type()).isEqualTo(type);
            float[] x = new float[SHAPE.hiddenDim()];
            float[] y = new float[SHAPE.hiddenDim()];
            for (int r = 0; r < SHAPE.dim(); r++) {
                QuantMatmul.row(a.matrix(Model.Matrix.DOWN, 1), r, x, 0);
                QuantMatmul.row(b.matrix(Model.Matrix.DOWN, 1), r, y, 0);
                for (int i = 0; i < x.length; i++) {
                    assertThat(y[i]).as("%s row %d col %d", type, r, i).isCloseTo(x[i],
                            org.assertj.core.data.Offset.offset(bound(type, x, i)));
                }
            }
        }
    }

    private static float bound(TensorType t, float[] row, int i) {
        int b0 = i / 32 * 32;
        float amax = 0;
        for (int k = b0; k < b0 + 32; k++) amax = Math.max(amax, Math.abs(row[k]));
        return switch (t) {
            case F16 -> Math.abs(row[i]) * 0x1p-11f + 1e-7f;
            case BF16 -> Math.abs(row[i]) * 0x1p-8f;
            // half a step, plus the scale's own rounding to f16 (relative 2^-11) times the largest |q|
            case Q8_0 -> amax / 127f * (0.5f + 127 * 0x1p-11f) + 1e-7f;
            case Q4_0 -> amax / 8f * (1f + 8 * 0x1p-11f) + 1e-7f;
            default -> 0;
        };
    }

    /**
     * The largest-magnitude value survives (exactly for Q4_0, whose scale -4/-8 is an exact half;
     * within the f16 rounding of the scale 4/127 for Q8_0); an all-zero block stays zero.
     */
    @Test
    void closingAGgufModelTwiceIsHarmlessAndInvalidatesItsWeights() {
        Path gguf = tmp.resolve("c.gguf");
        GgufWriter.writeRandom(gguf, new ModelConfig(64, 128, 1, 4, 4, 32, 16, true), TensorType.F32, 3);
        Model m = Models.load(gguf, new DigestCache(tmp.resolve("d")));
        var emb = m.tokenEmbedding().data();
        m.close();
        m.close(); // generate closes the model and so does its engine
        assertThatThrownBy(() -> emb.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void encodersKeepTheExtremeAndZeroBlocks() {
        float[] x = new float[64];
        Random rnd = new Random(3);
        for (int i = 0; i < 32; i++) x[i] = (float) rnd.nextGaussian();
        x[5] = -4f;     // the largest magnitude, negative
        for (TensorType t : new TensorType[] {TensorType.Q8_0, TensorType.Q4_0}) {
            ByteBuffer b = ByteBuffer.allocate((int) t.rowBytes(64)).order(ByteOrder.LITTLE_ENDIAN);
            ScalarQuant.encode(t, x, 0, 64, b);
            float[] y = new float[64];
            ScalarDequant.dequantize(t, java.lang.foreign.MemorySegment.ofArray(b.array()), 0, y, 0, 64);
            float tol = t == TensorType.Q4_0 ? 0f : 4f * 0x1p-11f;
            assertThat(y[5]).as("%s keeps the extreme value", t).isCloseTo(-4f, org.assertj.core.data.Offset.offset(tol));
            for (int i = 32; i < 64; i++) assertThat(y[i]).isZero();
        }
    }
}
