package io.kvtier.model.tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Test-side encoder: packs chosen quantized values, scales and mins into ggml blocks, written
 * from the layout description independently of {@link ScalarDequant}'s unpacking, so that a
 * test can state the exact float each packed value must decode to.
 */
final class BlockPacker {

    private BlockPacker() {
    }

    static ByteBuffer le(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Q8_0: scale {@code d} (an exact half) and 32 int8 values. */
    static void q8_0(ByteBuffer b, float d, int[] q) {
        b.putShort(Float.floatToFloat16(d));
        for (int i = 0; i < 32; i++) {
            b.put((byte) q[i]);
        }
    }

    /** Q4_0: scale {@code d} and 32 unsigned 4-bit values (0..15), value i of the block at position i. */
    static void q4_0(ByteBuffer b, float d, int[] q) {
        b.putShort(Float.floatToFloat16(d));
        for (int i = 0; i < 16; i++) {
            b.put((byte) (q[i] | (q[i + 16] << 4)));
        }
    }

    /**
     * Q4_K: super-block scales {@code d}, {@code dmin}; per sub-block j (0..7) a 6-bit scale
     * {@code sc[j]} and min {@code m[j]}; 256 4-bit values, value {@code 32j + l} in sub-block j.
     */
    static void q4K(ByteBuffer b, float d, float dmin, int[] sc, int[] m, int[] q) {
        b.putShort(Float.floatToFloat16(d));
        b.putShort(Float.floatToFloat16(dmin));
        byte[] s = new byte[12];
        for (int j = 0; j < 4; j++) {
            s[j] = (byte) ((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
            s[j + 4] = (byte) ((m[j] & 63) | ((m[j + 4] >> 4) << 6));
            s[j + 8] = (byte) ((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
        }
        b.put(s);
        for (int g = 0; g < 4; g++) {
            for (int l = 0; l < 32; l++) {
                b.put((byte) (q[64 * g + l] | (q[64 * g + 32 + l] << 4)));
            }
        }
    }

    /** Q6_K: 16 int8 scales (one per 16 values), super-block scale {@code d}, 256 6-bit values (0..63). */
    static void q6K(ByteBuffer b, float d, int[] sc, int[] q) {
        byte[] ql = new byte[128];
        byte[] qh = new byte[64];
        for (int i = 0; i < 256; i++) {
            int half = i / 128;
            int r = i % 128;
            int j = r / 32;          // which of the four 32-value runs of this half
            int l = r % 32;
            int lowIndex = 64 * half + l + (j % 2 == 1 ? 32 : 0);
            int lowShift = j >= 2 ? 4 : 0;
            ql[lowIndex] |= (byte) ((q[i] & 15) << lowShift);
            qh[32 * half + l] |= (byte) (((q[i] >> 4) & 3) << (2 * j));
        }
        b.put(ql);
        b.put(qh);
        for (int i = 0; i < 16; i++) {
            b.put((byte) sc[i]);
        }
        b.putShort(Float.floatToFloat16(d));
    }
}
