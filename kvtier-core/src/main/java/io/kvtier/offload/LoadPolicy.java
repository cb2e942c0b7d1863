package io.kvtier.offload;

import java.util.Locale;

/**
 * Whether a hit in a tier beyond the device is loaded ({@code --load-policy}).
 *
 * <p>{@link #ALWAYS} (default): every hit is loaded. {@link #FASTER}: only the leading chunks whose
 * load is estimated cheaper than recomputing them ({@link LoadCosts}). {@link #NEVER}: every hit is
 * recomputed (stores still run): the baseline "recompute" that {@code faster} is measured against.
 */
public enum LoadPolicy {
    ALWAYS, FASTER, NEVER;

    /**
     * Parses {@code always}, {@code faster} or {@code never}.
     *
     * @throws IllegalArgumentException for another name
     */
    public static LoadPolicy parse(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "always" -> ALWAYS;
            case "faster" -> FASTER;
            case "never" -> NEVER;
            default -> throw new IllegalArgumentException("unknown load policy '" + name + "' (expected always, faster or never)");
        };
    }

    /** The flag's spelling: {@code always}, {@code faster} or {@code never}. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
