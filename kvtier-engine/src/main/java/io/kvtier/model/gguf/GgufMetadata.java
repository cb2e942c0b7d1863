package io.kvtier.model.gguf;

import io.kvtier.model.ModelFormatException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The key-value metadata of a GGUF file, in file order, with typed getters. A required getter
 * throws {@link ModelFormatException} naming the file and the key when the key is missing or
 * holds another type; the two-argument forms return the default when the key is absent (but
 * still reject a wrong type). Integer getters accept any integer width whose value fits.
 *
 * <p>Immutable; array getters return copies only where noted.
 */
public final class GgufMetadata {

    private final String file;
    private final Map<String, GgufValue> values;

    GgufMetadata(String file, LinkedHashMap<String, GgufValue> values) {
        this.file = file;
        this.values = Collections.unmodifiableMap(values);
    }

    /** The keys in file order. */
    public Set<String> keys() {
        return values.keySet();
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    /** The raw value, or null when absent. */
    public GgufValue get(String key) {
        return values.get(key);
    }

    public String getString(String key) {
        return (String) require(key, GgufValueType.STRING).value();
    }

    public String getString(String key, String dflt) {
        return has(key) ? getString(key) : dflt;
    }

    /** An integer key of any width, as a signed long (UINT64 above 2^63-1 is rejected). */
    public long getLong(String key) {
        GgufValue v = requirePresent(key);
        if (!v.type().isInteger()) {
            throw wrongType(key, v, "an integer");
        }
        long x = (Long) v.value();
        if (v.type() == GgufValueType.UINT64 && x < 0) {
            throw new ModelFormatException(file + ": metadata key " + key + " = " + Long.toUnsignedString(x)
                    + " is out of range");
        }
        return x;
    }

    public long getLong(String key, long dflt) {
        return has(key) ? getLong(key) : dflt;
    }

    /** An integer key whose value fits an int. */
    public int getInt(String key) {
        long x = getLong(key);
        if (x != (int) x) {
            throw new ModelFormatException(file + ": metadata key " + key + " = " + x + " is out of range");
        }
        return (int) x;
    }

    public int getInt(String key, int dflt) {
        return has(key) ? getInt(key) : dflt;
    }

    /** A FLOAT32 or FLOAT64 key (FLOAT64 rounded to float). */
    public float getFloat(String key) {
        GgufValue v = requirePresent(key);
        return switch (v.type()) {
            case FLOAT32 -> (Float) v.value();
            case FLOAT64 -> (float) (double) (Double) v.value();
            default -> throw wrongType(key, v, "FLOAT32");
        };
    }

    public float getFloat(String key, float dflt) {
        return has(key) ? getFloat(key) : dflt;
    }

    public boolean getBool(String key) {
        return (Boolean) require(key, GgufValueType.BOOL).value();
    }

    public boolean getBool(String key, boolean dflt) {
        return has(key) ? getBool(key) : dflt;
    }

    /** An array of STRING (the stored array; do not modify). */
    public String[] getStringArray(String key) {
        return (String[]) requireArray(key, GgufValueType.STRING).value();
    }

    /** An array of FLOAT32 (the stored array; do not modify). */
    public float[] getFloatArray(String key) {
        return (float[]) requireArray(key, GgufValueType.FLOAT32).value();
    }

    /** An array of any integer type whose elements all fit an int (a new array). */
    public int[] getIntArray(String key) {
        GgufValue v = requirePresent(key);
        if (v.type() != GgufValueType.ARRAY || !v.elementType().isInteger()) {
            throw wrongType(key, v, "an ARRAY of integers");
        }
        long[] a = (long[]) v.value();
        int[] out = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            if (a[i] != (int) a[i]) {
                throw new ModelFormatException(file + ": metadata key " + key + "[" + i + "] = " + a[i]
                        + " is out of range");
            }
            out[i] = (int) a[i];
        }
        return out;
    }

    private GgufValue requirePresent(String key) {
        GgufValue v = values.get(key);
        if (v == null) {
            throw new ModelFormatException(file + ": missing required metadata key " + key);
        }
        return v;
    }

    private GgufValue require(String key, GgufValueType type) {
        GgufValue v = requirePresent(key);
        if (v.type() != type) {
            throw wrongType(key, v, type.name());
        }
        return v;
    }

    private GgufValue requireArray(String key, GgufValueType element) {
        GgufValue v = requirePresent(key);
        if (v.type() != GgufValueType.ARRAY || v.elementType() != element) {
            throw wrongType(key, v, "an ARRAY of " + element);
        }
        return v;
    }

    private ModelFormatException wrongType(String key, GgufValue v, String expected) {
        return new ModelFormatException(file + ": metadata key " + key + " is " + v.typeName() + ", expected "
                + expected);
    }
}
