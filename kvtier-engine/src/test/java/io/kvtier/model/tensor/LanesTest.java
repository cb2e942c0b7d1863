package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scalar lane sum over stored lanes gives the vector tree's bits exactly, at every lane count
 * (the kernels switch between them by species; a last-bit difference changes near-tie tokens).
 */
class LanesTest {

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 20261204})
    void theStoredLanesSumToTheVectorTreesBits(long seed) {
        Random rnd = new Random(seed);
        for (VectorSpecies<Float> s : java.util.List.of(FloatVector.SPECIES_128, FloatVector.SPECIES_256, FloatVector.SPECIES_512)) {
            float[] lanes = new float[s.length() + 3];
            for (int round = 0; round < 2_000; round++) {
                for (int i = 0; i < lanes.length; i++) {
                    // Mixed magnitudes and signs: where the order of the adds shows in the last bits.
                    lanes[i] = (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(9) - 4));
                }
                float vector = Lanes.sum(FloatVector.fromArray(s, lanes, 3));
                float scalar = Lanes.sum(lanes, 3, s.length());
                assertThat(Float.floatToRawIntBits(scalar)).as("seed %d, %d lanes, round %d: %s vs %s", seed, s.length(), round,
                        scalar, vector).isEqualTo(Float.floatToRawIntBits(vector));
            }
        }
    }

    /** The order is a tree, not a left-to-right sum: these lanes sum to 0 left to right, to 1 in the tree. */
    @Test
    void theOrderIsTheTreesNotLeftToRight() {
        float[] lanes = {1e8f, 1f, -1e8f, 0f};
        assertThat(Lanes.sum(lanes, 0, 4)).isEqualTo(1f);   // (1e8 + -1e8) + (1 + 0)
        assertThat(((lanes[0] + lanes[1]) + lanes[2]) + lanes[3]).isEqualTo(0f);
        assertThatThrownBy(() -> Lanes.sum(lanes, 0, 3)).isInstanceOf(IllegalArgumentException.class);
    }
}
