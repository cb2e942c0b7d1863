package io.kvtier.model.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The reference dequantizers: plain loops over ggml's block layouts (ggml-common.h), computing
 * each value in the same float operation order as ggml's {@code dequantize_row_*}, so they give
 * exactly the floats that llama.cpp's {@code to_float} gives. The vector kernels of
 * {@link QuantDot} are tested against these.
 *
 * <p>Block layouts (all little-endian; {@code f16} is an IEEE half):
 * <ul>
 *   <li>Q8_0, 32 values, 34 bytes: {@code f16 d; int8 qs[32]}; {@code x[i] = d * qs[i]}.</li>
 *   <li>Q4_0, 32 values, 18 bytes: {@code f16 d; uint8 qs[16]}; {@code x[i] = ((qs[i] & 15) - 8) * d},
 *       {@code x[i+16] = ((qs[i] >> 4) - 8) * d} for i &lt; 16.</li>
 *   <li>Q4_K, 256 values, 144 bytes: {@code f16 d; f16 dmin; uint8 scales[12]; uint8 qs[128]}; eight
 *       sub-blocks of 32 with a 6-bit scale and a 6-bit min each (packed as in
 *       {@link #scaleMinK4}); group g of 64 values uses {@code qs[32g..32g+31]}, low nibbles with
 *       sub-block 2g, high nibbles with 2g+1: {@code x = d*sc * q - dmin*m}.</li>
 *   <li>Q6_K, 256 values, 210 bytes: {@code uint8 ql[128]; uint8 qh[64]; int8 scales[16]; f16 d};
 *       two halves of 128 values, each from {@code ql[64]}, {@code qh[32]}, {@code scales[8]}; value
 *       {@code l + 32j} (l &lt; 32, j &lt; 4) of a half is 6 bits (4 from ql, 2 from qh) minus 32,
 *       times {@code d * scales[l/16 + 2j]}.</li>
 * </ul>
 */
public final class ScalarDequant {

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ScalarDequant() {
    }

    /**
     * Dequantizes {@code n} values (whole blocks) of type {@code type} starting at byte {@code off}
     * of {@code src} into {@code dst[dstOff..dstOff+n-1]}.
     */
    public static void dequantize(TensorType type, MemorySegment src, long off, float[] dst, int dstOff, int n) {
        int blocks = n / type.blockValues();
        long bb = type.blockBytes();
        for (int b = 0; b < blocks; b++) {
            long p = off + b * bb;
            int o = dstOff + b * type.blockValues();
            switch (type) {
                case F32 -> dst[o] = src.get(F32, p);
                case F16 -> dst[o] = f16(src, p);
                case BF16 -> dst[o] = Float.intBitsToFloat((src.get(I16, p) & 0xFFFF) << 16);
                case Q8_0 -> q8_0(src, p, dst, o);
                case Q4_0 -> q4_0(src, p, dst, o);
                case Q4_K -> q4K(src, p, dst, o);
                case Q6_K -> q6K(src, p, dst, o);
            }
        }
    }

    /** The IEEE half at byte {@code p}, as a float. */
    static float f16(MemorySegment s, long p) {
        return Float.float16ToFloat(s.get(I16, p));
    }

    private static int u8(MemorySegment s, long p) {
        return s.get(ValueLayout.JAVA_BYTE, p) & 0xFF;
    }

    private static void q8_0(MemorySegment s, long p, float[] y, int o) {
        float d = f16(s, p);
        for (int i = 0; i < 32; i++) {
            y[o + i] = d * s.get(ValueLayout.JAVA_BYTE, p + 2 + i);
        }
    }

    private static void q4_0(MemorySegment s, long p, float[] y, int o) {
        float d = f16(s, p);
        for (int i = 0; i < 16; i++) {
            int q = u8(s, p + 2 + i);
            y[o + i] = ((q & 0xF) - 8) * d;
            y[o + i + 16] = ((q >> 4) - 8) * d;
        }
    }

    /**
     * Q4_K's 6-bit scale (bits 0..7 of the result) and min (bits 8..15) of sub-block {@code j}
     * (0..7) from the 12 packed bytes at {@code p}: sub-blocks 0..3 keep theirs in the low 6 bits
     * of bytes j and j+4; 4..7 keep the low 4 bits in byte j+4 (scale low nibble, min high nibble)
     * and the top 2 bits in the top 2 bits of bytes j-4 (scale) and j (min).
     */
    static int scaleMinK4(MemorySegment s, long p, int j) {
        if (j < 4) {
            return (u8(s, p + j) & 63) | (u8(s, p + j + 4) & 63) << 8;
        }
        int scale = (u8(s, p + j + 4) & 0xF) | ((u8(s, p + j - 4) >> 6) << 4);
        int min = (u8(s, p + j + 4) >> 4) | ((u8(s, p + j) >> 6) << 4);
        return scale | min << 8;
    }

    private static void q4K(MemorySegment s, long p, float[] y, int o) {
        float d = f16(s, p);
        float min = f16(s, p + 2);
        long scales = p + 4;
        long qs = p + 16;
        for (int g = 0; g < 4; g++) {
            int sm1 = scaleMinK4(s, scales, 2 * g);
            float d1 = d * (sm1 & 0xFF);
            float m1 = min * (sm1 >> 8);
            int sm2 = scaleMinK4(s, scales, 2 * g + 1);
            float d2 = d * (sm2 & 0xFF);
            float m2 = min * (sm2 >> 8);
            for (int l = 0; l < 32; l++) {
                int q = u8(s, qs + 32 * g + l);
                y[o + 64 * g + l] = d1 * (q & 0xF) - m1;
                y[o + 64 * g + 32 + l] = d2 * (q >> 4) - m2;
            }
        }
    }

    private static void q6K(MemorySegment s, long p, float[] y, int o) {
        float d = f16(s, p + 208);
        for (int half = 0; half < 2; half++) {
            long ql = p + 64 * half;
            long qh = p + 128 + 32 * half;
            long sc = p + 192 + 8 * half;
            int base = o + 128 * half;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int h = u8(s, qh + l);
                int a = u8(s, ql + l);
                int b = u8(s, ql + l + 32);
                int q1 = ((a & 0xF) | ((h & 3) << 4)) - 32;
                int q2 = ((b & 0xF) | (((h >> 2) & 3) << 4)) - 32;
                int q3 = ((a >> 4) | (((h >> 4) & 3) << 4)) - 32;
                int q4 = ((b >> 4) | (((h >> 6) & 3) << 4)) - 32;
                y[base + l] = d * s.get(ValueLayout.JAVA_BYTE, sc + is) * q1;
                y[base + l + 32] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 2) * q2;
                y[base + l + 64] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 4) * q3;
                y[base + l + 96] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 6) * q4;
            }
        }
    }

    /** Scalar reference dot product of row {@code n} values at byte {@code off} with {@code x[xOff..]}, in double. */
    public static double dot(TensorType type, MemorySegment src, long off, float[] x, int xOff, int n) {
        float[] row = new float[n];
        dequantize(type, src, off, row, 0, n);
        double s = 0;
        for (int i = 0; i < n; i++) {
            s += (double) row[i] * x[xOff + i];
        }
        return s;
    }
}
