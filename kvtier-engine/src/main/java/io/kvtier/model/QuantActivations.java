package io.kvtier.model;

import java.util.Locale;

/**
 * How the activations meet Q8_0 and Q4_0 weights ({@link io.kvtier.model.tensor.QuantMatmul#int8}),
 * in every step, decode, prefill and batches alike: {@link #Q8_0} quantizes them to Q8_0 blocks
 * first and multiplies in integers, as llama.cpp does (its plain references: a request's greedy
 * tokens are llama.cpp's); {@link #F32} multiplies the exactly dequantized weights with float32
 * activations (its {@code .deqf32} references). Other encodings (Q4_K, Q6_K, F16, BF16) always
 * meet float32 activations. The default is the system property {@value #PROPERTY} ({@code q8_0}
 * or {@code f32}), else {@link #Q8_0}.
 */
public enum QuantActivations {
    Q8_0, F32;

    /** The system property read by {@link #fromSystemProperty}. */
    public static final String PROPERTY = "kvtier.quant.activations";

    /**
     * @throws IllegalArgumentException naming the property when its value is neither {@code q8_0} nor {@code f32}
     */
    public static QuantActivations fromSystemProperty() {
        String v = System.getProperty(PROPERTY, "q8_0").strip();
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "q8_0" -> Q8_0;
            case "f32" -> F32;
            default -> throw new IllegalArgumentException("-D" + PROPERTY + " must be q8_0 or f32, got '" + v + "'");
        };
    }
}
