package io.kvtier.kv;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/** Builds a model's {@link KvGroup}s from the attention kind of each layer. */
public final class KvGroups {

    private KvGroups() {
    }

    /**
     * One group per distinct window, the full-attention group (window 0) first, then windows in
     * ascending order; each group's layers ascending. A Llama model (every window 0) has one group.
     *
     * @param windowOfLayer per layer, 0 for full attention or its sliding window (positions)
     * @throws IllegalArgumentException for no layers or a negative window
     */
    public static List<KvGroup> of(int[] windowOfLayer) {
        if (windowOfLayer.length == 0) {
            throw new IllegalArgumentException("a model without layers has no KV groups");
        }
        TreeMap<Integer, List<Integer>> byWindow = new TreeMap<>();
        for (int l = 0; l < windowOfLayer.length; l++) {
            if (windowOfLayer[l] < 0) {
                throw new IllegalArgumentException("layer " + l + " has window " + windowOfLayer[l]);
            }
            byWindow.computeIfAbsent(windowOfLayer[l], w -> new ArrayList<>()).add(l);
        }
        List<KvGroup> groups = new ArrayList<>();
        for (var e : byWindow.entrySet()) {
            groups.add(new KvGroup(groups.size(), e.getKey(), e.getValue().stream().mapToInt(Integer::intValue).toArray()));
        }
        return List.copyOf(groups);
    }
}
