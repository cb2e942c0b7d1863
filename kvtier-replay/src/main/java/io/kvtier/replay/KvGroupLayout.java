package io.kvtier.replay;

import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvGroups;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The simulated model's KV groups for the replay's hybrid cost model: the attention kind of each
 * layer (full, or a sliding window of W positions) and the KV bytes one token takes in one layer.
 * The replay groups the layers as the engine does ({@link KvGroups#of}: the full group first), and
 * a group's block of B tokens is {@code B x layers of the group x bytesPerTokenPerLayer} bytes.
 *
 * @param name                  the name on the command line ({@code --kv-groups NAME})
 * @param windowOfLayer         per layer, 0 for full attention or its sliding window, positions
 * @param bytesPerTokenPerLayer KV bytes of one token in one layer: KV heads x head dim x 2 (K and V)
 *                              x bytes per value
 */
public record KvGroupLayout(String name, int[] windowOfLayer, long bytesPerTokenPerLayer) {

    /**
     * Gemma 3 27B in BF16 (google/gemma-3-27b-it {@code config.json}: 62 layers, 16 KV heads, head
     * dim 128, sliding window 1024, five local layers to one global one starting with a local layer,
     * so layers 5, 11, ..., 59 are global): 10 full layers and 52 window layers, 16 x 128 x 2 x 2 =
     * 8,192 B per token per layer, 507,904 B per token over all layers.
     */
    public static final KvGroupLayout GEMMA3_27B = pattern("gemma3-27b", 62, 6, 1024, 16L * 128 * 2 * 2);

    /** Gemma 3 27B's layers all with full attention: every block of every layer is stored and loaded. */
    public static final KvGroupLayout GEMMA3_27B_ALL_FULL = GEMMA3_27B.allFull();

    /** The named layouts, as {@code --kv-groups} takes them. */
    public static final List<KvGroupLayout> NAMED = List.of(GEMMA3_27B, GEMMA3_27B_ALL_FULL);

    public KvGroupLayout {
        if (windowOfLayer.length == 0 || bytesPerTokenPerLayer < 1) {
            throw new IllegalArgumentException("a KV group layout needs layers and bytes per token per layer >= 1, got "
                    + windowOfLayer.length + " layers of " + bytesPerTokenPerLayer + " B");
        }
        windowOfLayer = windowOfLayer.clone();
        KvGroups.of(windowOfLayer); // refuses a negative window
    }

    /**
     * {@code layers} layers where every {@code period}-th one (1-based) has full attention and the
     * others a window of {@code window} positions, as Gemma 3's pattern.
     */
    public static KvGroupLayout pattern(String name, int layers, int period, int window, long bytesPerTokenPerLayer) {
        int[] w = new int[layers];
        for (int l = 0; l < layers; l++) {
            w[l] = (l + 1) % period == 0 ? 0 : window;
        }
        return new KvGroupLayout(name, w, bytesPerTokenPerLayer);
    }

    /**
     * The layout named {@code name} ({@link #NAMED}).
     *
     * @throws IllegalArgumentException naming the known layouts
     */
    public static KvGroupLayout named(String name) {
        for (KvGroupLayout l : NAMED) {
            if (l.name.equalsIgnoreCase(name)) {
                return l;
            }
        }
        throw new IllegalArgumentException("--kv-groups: '" + name + "' is not a known layout ("
                + String.join(", ", NAMED.stream().map(KvGroupLayout::name).toList()) + ")");
    }

    @Override
    public int[] windowOfLayer() {
        return windowOfLayer.clone();
    }

    /** The same layers, all with full attention: one group, named {@code <name>-all-full}. */
    public KvGroupLayout allFull() {
        return new KvGroupLayout(name.endsWith("-all-full") ? name : name + "-all-full", new int[windowOfLayer.length],
                bytesPerTokenPerLayer);
    }

    /** The KV groups, full first ({@link KvGroups#of}). */
    public List<KvGroup> groups() {
        return KvGroups.of(windowOfLayer);
    }

    /** Whether there is more than one group (some layer has a window). */
    public boolean hybrid() {
        return groups().size() > 1;
    }

    /** KV bytes of one token over every layer. */
    public long bytesPerToken() {
        return Math.multiplyExact(windowOfLayer.length, bytesPerTokenPerLayer);
    }

    /** KV bytes of one token over the layers of {@code group}. */
    public long bytesPerToken(KvGroup group) {
        return Math.multiplyExact(group.layers().length, bytesPerTokenPerLayer);
    }

    /** E.g. {@code gemma3-27b: 62 layers, group 0 full x 10 layers, group 1 window 1024 x 52 layers; 8,192 B per token per layer}. */
    public String describe() {
        StringBuilder sb = new StringBuilder(name).append(": ").append(windowOfLayer.length).append(" layers");
        for (KvGroup g : groups()) {
            sb.append(g.index() == 0 ? ", " : "; ").append("group ").append(g.index())
                    .append(g.sliding() ? " window " + g.window() : " full").append(" x ").append(g.layers().length)
                    .append(" layers");
        }
        return sb.append(String.format(Locale.ROOT, "; %,d B per token per layer", bytesPerTokenPerLayer)).toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KvGroupLayout l && name.equals(l.name) && Arrays.equals(windowOfLayer, l.windowOfLayer)
                && bytesPerTokenPerLayer == l.bytesPerTokenPerLayer;
    }

    @Override
    public int hashCode() {
        return (31 * name.hashCode() + Arrays.hashCode(windowOfLayer)) * 31 + Long.hashCode(bytesPerTokenPerLayer);
    }

    @Override
    public String toString() {
        return describe();
    }
}
