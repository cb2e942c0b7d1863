package io.kvtier.model.gguf;

import io.kvtier.model.ArchSpec;
import io.kvtier.model.DigestCache;
import io.kvtier.model.Model;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.ModelFormatException;
import io.kvtier.model.QuantActivations;
import io.kvtier.model.tensor.FiniteCheck;
import io.kvtier.model.tensor.Interleaved;
import io.kvtier.model.tensor.TensorType;
import io.kvtier.model.tensor.Weight;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;

/**
 * A GGUF model of the {@code llama}, {@code qwen2}, {@code qwen3} or {@code gemma3} family, its weights left in
 * the bytes of {@link GgufFile} (read into memory). The shape comes from the {@code <arch>.*} metadata keys, the
 * family's differences from {@link GgufSpecs}; every tensor the family needs is checked for
 * presence, shape and a supported encoding ({@link TensorType}) when loaded, so a bad file fails
 * with one line naming it and the tensor, never later in the forward pass.
 *
 * <p>Tensor names are llama.cpp's: {@code token_embd}, {@code output_norm}, {@code output}
 * (absent = tied to the embedding), {@code rope_freqs}, and per layer {@code blk.N.} +
 * {@code attn_norm}, {@code attn_q}/{@code _k}/{@code _v} (+ {@code .bias}), {@code attn_q_norm},
 * {@code attn_k_norm}, {@code attn_output}, {@code ffn_norm}, {@code ffn_gate}, {@code ffn_up},
 * {@code ffn_down}, and Gemma's {@code post_attention_norm} and {@code post_ffw_norm}. Gemma's norm
 * weights are used as stored: llama.cpp's converter has already added Gemma's {@code 1 +} to them.
 *
 * <p>Q4_0 and Q8_0 matrices whose rows come in whole {@link Interleaved#GROUP}s are repacked at load, in
 * place in the file's memory (no second copy), into {@link Interleaved}'s layout for the decode
 * kernel on Q8_0 activations, unless {@code -Dkvtier.quant.interleave=false} or
 * {@code -Dkvtier.quant.activations=f32} (whose decode would not use it); {@link #modelId()} is
 * then computed first, from the file's bytes as read.
 */
public final class GgufModel implements Model {

    private static final String[] MATRIX_NAMES = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
        "ffn_down"};

    private final GgufFile file;
    private final String name;
    private final ModelConfig config;
    private final ArchSpec spec;
    private final Weight tokenEmbedding;
    private final Weight classifier;
    private final MemorySegment outputNorm;
    private final EnumMap<Matrix, Weight[]> matrices = new EnumMap<>(Matrix.class);
    private final EnumMap<Matrix, MemorySegment[]> biases = new EnumMap<>(Matrix.class);
    private final EnumMap<Norm, MemorySegment[]> norms = new EnumMap<>(Norm.class);
    private final String modelId;

    private GgufModel(GgufFile file, DigestCache digests) {
        this.file = file;
        this.name = "GGUF file " + file.path();
        GgufMetadata md = file.metadata();
        String arch = md.getString("general.architecture");
        GgufTensor emb = file.tensor("token_embd.weight");
        this.config = GgufSpecs.config(name, arch, md, emb, file.findTensor("output.weight") == null);
        float[] factors = null;
        GgufTensor rf = file.findTensor("rope_freqs.weight");
        if (rf != null) {
            factors = vector(rf, -1).toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED
                    .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN));
        }
        this.spec = GgufSpecs.spec(name, arch, md, config, factors);
        // The digest names the file's bytes: taken before the first Q4_0 tensor is repacked.
        this.modelId = "gguf:" + digests.sha256(file.path(), file.segment().asSlice(file.dataOffset()), this::checkFinite)
                + "|" + config + "|" + spec;
        int d = config.dim();
        tokenEmbedding = matrix(emb, config.vocabSize(), d);
        outputNorm = vector(file.tensor("output_norm.weight"), d);
        GgufTensor out = file.findTensor("output.weight");
        classifier = out == null ? tokenEmbedding : matrix(out, config.vocabSize(), d);
        int[][] shapes = {{config.qDim(), d}, {config.kvDim(), d}, {config.kvDim(), d}, {d, config.qDim()},
            {config.hiddenDim(), d}, {config.hiddenDim(), d}, {d, config.hiddenDim()}};
        for (Matrix m : Matrix.values()) {
            Weight[] ws = new Weight[config.layers()];
            for (int l = 0; l < ws.length; l++) {
                ws[l] = matrix(file.tensor(layer(l, MATRIX_NAMES[m.ordinal()]) + ".weight"),
                        shapes[m.ordinal()][0], shapes[m.ordinal()][1]);
            }
            matrices.put(m, ws);
        }
        norms.put(Norm.ATTENTION, perLayer("attn_norm.weight", d, true));
        norms.put(Norm.FFN, perLayer("ffn_norm.weight", d, true));
        norms.put(Norm.Q_HEAD, perLayer("attn_q_norm.weight", config.headDim(), spec.qkNorm()));
        norms.put(Norm.K_HEAD, perLayer("attn_k_norm.weight", config.headDim(), spec.qkNorm()));
        norms.put(Norm.POST_ATTENTION, perLayer("post_attention_norm.weight", d, spec.gemma().postNorms()));
        norms.put(Norm.POST_FFN, perLayer("post_ffw_norm.weight", d, spec.gemma().postNorms()));
        biases.put(Matrix.Q, perLayer("attn_q.bias", config.qDim(), spec.qkvBias()));
        biases.put(Matrix.K, perLayer("attn_k.bias", config.kvDim(), spec.qkvBias()));
        biases.put(Matrix.V, perLayer("attn_v.bias", config.kvDim(), spec.qkvBias()));
    }

    /**
     * Opens and validates a GGUF model; its {@link #modelId()} digest is cached in
     * {@code digests}.
     *
     * @throws ModelFormatException (one line naming the file) for a malformed file, an
     *         unsupported architecture or tensor type, a missing key or tensor, a tensor of the
     *         wrong shape
     */
    public static GgufModel load(Path path, DigestCache digests) {
        GgufFile f = GgufFile.open(path);
        try {
            return new GgufModel(f, digests);
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    private static String layer(int l, String tensor) {
        return "blk." + l + "." + tensor;
    }

    private MemorySegment[] perLayer(String tensor, int n, boolean required) {
        if (!required) {
            return null;
        }
        MemorySegment[] out = new MemorySegment[config.layers()];
        for (int l = 0; l < out.length; l++) {
            out[l] = vector(file.tensor(layer(l, tensor)), n);
        }
        return out;
    }

    /** A float32 vector of {@code n} values ({@code n < 0}: any length). */
    private MemorySegment vector(GgufTensor t, int n) {
        if (t.type() != GgmlType.F32 || t.dims().length != 1 || (n >= 0 && t.dim(0) != n)) {
            throw new ModelFormatException(name + ": tensor " + t.name() + " is " + t.type() + " "
                    + java.util.Arrays.toString(t.dims()) + ", expected F32 [" + (n < 0 ? "n" : n) + "]");
        }
        return file.data(t);
    }

    private Weight matrix(GgufTensor t, int rows, int cols) {
        if (t.dims().length != 2 || t.dim(0) != cols || t.dim(1) != rows) {
            throw new ModelFormatException(name + ": tensor " + t.name() + " has ne " + java.util.Arrays.toString(t.dims())
                    + ", expected [" + cols + ", " + rows + "]");
        }
        TensorType type = TensorType.ofGgmlId(t.type().id);
        if (type == null) {
            throw new ModelFormatException(name + ": tensor " + t.name() + " is " + t.type()
                    + ", which kvtier does not compute with (supported: " + java.util.Arrays.toString(TensorType.values()) + ")");
        }
        if (Interleaved.supports(type) && Interleaved.ENABLED && Interleaved.fits(rows, cols)
                && QuantActivations.fromSystemProperty() == QuantActivations.Q8_0
                && Interleaved.finiteScales(type, file.data(t), rows, cols)) {   // the repacked kernels' scales are finite
            MemorySegment data = file.repackable(t);
            Interleaved.repackInPlace(type, data, rows, cols);
            return new Weight(type, data.asReadOnly(), rows, cols, true);
        }
        return new Weight(type, file.data(t), rows, cols);
    }

    /** The GGUF file (for the tokenizer's metadata). */
    public GgufFile file() {
        return file;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public ArchSpec spec() {
        return spec;
    }

    @Override
    public Path path() {
        return file.path();
    }

    /**
     * {@code gguf:} + SHA-256 of the tensor data section (cached by path, size and modification
     * time, so a large file is hashed once) + the shape and spec that the metadata sets: two
     * files that differ in any weight or in any computed hyper-parameter get different ids.
     */
    @Override
    public String modelId() {
        return modelId;
    }

    /**
     * Every tensor of a type kvtier computes with holds finite values (scales, for quantized
     * types): run with the digest, so a file whose digest is cached was checked.
     *
     * @throws ModelFormatException naming the file, the tensor and the first bad value
     */
    private void checkFinite() {
        for (GgufTensor t : file.tensors()) {
            TensorType type = TensorType.ofGgmlId(t.type().id);
            FiniteCheck.Found bad = type == null ? null : FiniteCheck.firstNonFinite(type, file.data(t), t.elements());
            if (bad != null) {
                throw new ModelFormatException(name + ": tensor " + t.name() + " holds " + bad.description()
                        + "; the weights are damaged (every output would be NaN)");
            }
        }
    }

    @Override
    public Weight tokenEmbedding() {
        return tokenEmbedding;
    }

    @Override
    public Weight matrix(Matrix m, int layer) {
        return matrices.get(m)[layer];
    }

    @Override
    public MemorySegment bias(Matrix m, int layer) {
        MemorySegment[] b = biases.get(m);
        return b == null ? null : b[layer];
    }

    @Override
    public MemorySegment norm(Norm n, int layer) {
        MemorySegment[] v = norms.get(n);
        return v == null ? null : v[layer];
    }

    @Override
    public MemorySegment outputNorm() {
        return outputNorm;
    }

    @Override
    public Weight classifier() {
        return classifier;
    }

    @Override
    public void close() {
        file.close();
    }

    @Override
    public String toString() {
        List<String> types = new ArrayList<>();
        types.add("embd " + tokenEmbedding.type());
        types.add("layers " + matrices.get(Matrix.Q)[0].type());
        return "GgufModel[" + file.path() + ", " + config + ", " + spec + ", " + types + "]";
    }
}
