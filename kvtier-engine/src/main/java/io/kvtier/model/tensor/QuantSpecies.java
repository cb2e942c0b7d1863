package io.kvtier.model.tensor;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The vector shapes of the quantized kernels, fixed once per JVM as static final constants (C2
 * compiles vector code well only when the species is a constant). {@code L} float lanes: 16 when
 * the system property {@code kvtier.vector.bits} is 512, or unset on a CPU whose preferred
 * vectors are 512 bits wide; else 8 (256 bits; a request for 128 also gets 8, because 4 float
 * lanes would need byte vectors of 4 lanes, which do not exist). The byte, short and int species
 * have {@code L} lanes too, so a load of {@code L} bytes widens to exactly one float vector.
 */
final class QuantSpecies {

    /** The system property shared with the F32 kernels' {@code VectorKernels}. */
    static final String BITS_PROPERTY = "kvtier.vector.bits";
    static final VectorSpecies<Float> F = floats(System.getProperty(BITS_PROPERTY));
    static final int L = F.length();
    static final VectorSpecies<Byte> B = L == 16 ? ByteVector.SPECIES_128 : ByteVector.SPECIES_64;
    static final VectorSpecies<Short> S = L == 16 ? ShortVector.SPECIES_256 : ShortVector.SPECIES_128;
    static final VectorSpecies<Integer> I = L == 16 ? IntVector.SPECIES_512 : IntVector.SPECIES_256;

    private QuantSpecies() {
    }

    /** The float species for a {@code kvtier.vector.bits} value (null or blank = the CPU's preferred width). */
    static VectorSpecies<Float> floats(String bits) {
        boolean wide = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512;
        if (bits != null && !bits.isBlank()) {
            wide &= bits.strip().equals("512");
        }
        return wide ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
    }
}
