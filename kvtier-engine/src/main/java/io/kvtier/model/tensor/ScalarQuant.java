package io.kvtier.model.tensor;

import java.nio.ByteBuffer;

/**
 * Encoders for the types kvtier writes ({@code make-model --format gguf}): ggml's reference
 * quantizers ({@code quantize_row_*_ref}) in plain loops. Q8_0: {@code d = max|x| / 127},
 * {@code q = round(x / d)}. Q4_0: {@code d = m / -8} where m is the value of largest magnitude
 * (sign kept), {@code q = min(15, (int) (x / d + 8.5))}.
 */
public final class ScalarQuant {

    private ScalarQuant() {
    }

    /** The types {@link #encode} writes. */
    public static boolean canEncode(TensorType t) {
        return t == TensorType.F32 || t == TensorType.F16 || t == TensorType.BF16 || t == TensorType.Q8_0
                || t == TensorType.Q4_0;
    }

    /**
     * Appends {@code n} values {@code x[off..off+n-1]} (whole blocks) encoded as {@code type} to
     * {@code out} (little-endian).
     *
     * @throws IllegalArgumentException for a type that {@link #canEncode} refuses
     */
    public static void encode(TensorType type, float[] x, int off, int n, ByteBuffer out) {
        switch (type) {
            case F32 -> {
                for (int i = 0; i < n; i++) out.putFloat(x[off + i]);
            }
            case F16 -> {
                for (int i = 0; i < n; i++) out.putShort(Float.floatToFloat16(x[off + i]));
            }
            case BF16 -> {
                for (int i = 0; i < n; i++) out.putShort((short) (Float.floatToIntBits(x[off + i]) + 0x8000 >>> 16));
            }
            case Q8_0 -> {
                for (int b = off; b < off + n; b += 32) {
                    float amax = 0;
                    for (int i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[b + i]));
                    float d = amax / 127f;
                    float id = d != 0 ? 1f / d : 0f;
                    out.putShort(Float.floatToFloat16(d));
                    for (int i = 0; i < 32; i++) out.put((byte) Math.round(x[b + i] * id));
                }
            }
            case Q4_0 -> {
                for (int b = off; b < off + n; b += 32) {
                    float amax = 0;
                    float max = 0;
                    for (int i = 0; i < 32; i++) {
                        if (Math.abs(x[b + i]) > amax) {
                            amax = Math.abs(x[b + i]);
                            max = x[b + i];
                        }
                    }
                    float d = max / -8f;
                    float id = d != 0 ? 1f / d : 0f;
                    out.putShort(Float.floatToFloat16(d));
                    for (int i = 0; i < 16; i++) {
                        int lo = Math.min(15, (int) (x[b + i] * id + 8.5f));
                        int hi = Math.min(15, (int) (x[b + 16 + i] * id + 8.5f));
                        out.put((byte) (lo | hi << 4));
                    }
                }
            }
            default -> throw new IllegalArgumentException("kvtier does not write " + type);
        }
    }
}
