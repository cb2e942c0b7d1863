package io.kvtier.tier.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class Crc32cCombineTest {

    private static int crc(byte[] b, int from, int to) {
        CRC32C c = new CRC32C();
        c.update(b, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void knownValueOfTheStandardCheckString() {
        byte[] check = "123456789".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        // CRC-32C check value from the CRC catalogue (RFC 3720 appendix B.4 uses the same polynomial)
        assertThat(Crc32cCombine.combine(crc(check, 0, 4), crc(check, 4, 9), 5)).isEqualTo(0xE3069283);
    }

    /** crc(A || B) from crc(A), crc(B), |B| for random bytes and split points, empty ranges included. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42, 20261129})
    void combiningTwoRangesGivesTheCrcOfTheWhole(long seed) {
        Random rnd = new Random(seed);
        for (int round = 0; round < 200; round++) {
            byte[] b = new byte[rnd.nextInt(round < 100 ? 64 : 300_000)];
            rnd.nextBytes(b);
            int split = b.length == 0 ? 0 : rnd.nextInt(b.length + 1);
            assertThat(Crc32cCombine.combine(crc(b, 0, split), crc(b, split, b.length), b.length - split))
                    .as("seed %d, round %d: %d bytes split at %d", seed, round, b.length, split)
                    .isEqualTo(crc(b, 0, b.length));
        }
    }

    /** Many equal pieces and a short last one, one shift operator reused: what a piece read does. */
    @ParameterizedTest
    @ValueSource(longs = {7, 8, 9})
    void appendingEqualPiecesWithOneShiftGivesTheCrcOfTheWhole(long seed) {
        Random rnd = new Random(seed);
        int piece = 1 + rnd.nextInt(5000);
        byte[] b = new byte[piece * (2 + rnd.nextInt(40)) + rnd.nextInt(piece)];
        rnd.nextBytes(b);
        int shift = Crc32cCombine.shift(piece);
        int acc = crc(b, 0, piece);
        for (int at = piece; at < b.length; at += piece) {
            int end = Math.min(b.length, at + piece);
            int op = end - at == piece ? shift : Crc32cCombine.shift(end - at);
            acc = Crc32cCombine.append(op, acc, crc(b, at, end));
        }
        assertThat(acc).as("seed %d, %d bytes in pieces of %d", seed, b.length, piece).isEqualTo(crc(b, 0, b.length));
    }

    @Test
    void anEmptySecondRangeLeavesTheCrcAndANegativeLengthIsRefused() {
        byte[] b = new byte[1000];
        Arrays.fill(b, (byte) 7);
        assertThat(Crc32cCombine.combine(crc(b, 0, 1000), crc(b, 0, 0), 0)).isEqualTo(crc(b, 0, 1000));
        assertThatThrownBy(() -> Crc32cCombine.shift(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative length -1");
    }
}
