package io.kvtier.tier.disk;

/**
 * Combines CRC32C values of adjacent byte ranges: from {@code crc(A)}, {@code crc(B)} and
 * {@code |B|} it gives {@code crc(A || B)} without reading the bytes again, so that pieces of one
 * payload can be checksummed on different threads.
 *
 * <p>Math (the method of zlib's {@code crc32_combine}, Mark Adler; here for the Castagnoli
 * polynomial, reflected {@code 0x82F63B78}): appending {@code n} bytes multiplies the register
 * by {@code x^(8n)} modulo the polynomial, so {@code crc(A || B) = crc(A) * x^(8|B|) mod P xor
 * crc(B)}; the pre- and post-inversion of the standard CRC cancel out. {@code x^(8n)} is built
 * from precomputed powers {@code x^(2^k)} by square-and-multiply over the bits of {@code n}.
 * All values are CRCs as {@link java.util.zip.CRC32C} returns them, truncated to {@code int}.
 */
public final class Crc32cCombine {

    /** CRC-32C (Castagnoli) polynomial, bit-reflected. */
    private static final int POLY = 0x82F63B78;

    /** {@code X2N[k] = x^(2^k) mod P}, reflected (x^0 is bit 31); enough for any long length. */
    private static final int[] X2N = new int[64 + 3];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < X2N.length; k++) {
            p = multiply(p, p);
            X2N[k] = p;
        }
    }

    private Crc32cCombine() {
    }

    /**
     * {@code crc(A || B)}.
     *
     * @param crcA    CRC32C of the first range
     * @param crcB    CRC32C of the second range
     * @param lengthB bytes in the second range, >= 0
     */
    public static int combine(int crcA, int crcB, long lengthB) {
        return append(shift(lengthB), crcA, crcB);
    }

    /**
     * The operator {@code x^(8 * bytes) mod P}, for {@link #append} when many ranges have one
     * length (computing it costs about 40 multiplications; applying it, one).
     *
     * @param bytes range length in bytes, >= 0
     * @throws IllegalArgumentException if negative
     */
    public static int shift(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative length " + bytes);
        }
        int p = 1 << 31; // x^0
        long n = bytes;
        int k = 3; // x^(2^3) = x^8: one byte
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multiply(X2N[k], p);
            }
            n >>>= 1;
            k++;
        }
        return p;
    }

    /** {@code crc(A || B)} given {@code shift = shift(|B|)}. */
    public static int append(int shift, int crcA, int crcB) {
        return multiply(shift, crcA) ^ crcB;
    }

    /** a * b mod P, both reflected. */
    private static int multiply(int a, int b) {
        int m = 1 << 31;
        int p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    return p;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
    }
}
