package io.kvtier.model.gguf;

/** The metadata value types of GGUF ({@code enum gguf_type}), by their stored id. */
public enum GgufValueType {
    UINT8(1), INT8(1), UINT16(2), INT16(2), UINT32(4), INT32(4), FLOAT32(4), BOOL(1),
    STRING(8), ARRAY(12), UINT64(8), INT64(8), FLOAT64(8);

    /**
     * The fewest bytes one value of this type takes in the file (a string's length prefix, an
     * array's type and count): lets the reader reject an impossible array count before it
     * allocates.
     */
    final int minBytes;

    GgufValueType(int minBytes) {
        this.minBytes = minBytes;
    }

    /** The type stored as {@code id}, or null. */
    static GgufValueType byId(int id) {
        GgufValueType[] all = values();
        return id >= 0 && id < all.length ? all[id] : null;
    }

    boolean isInteger() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
            default -> false;
        };
    }
}
