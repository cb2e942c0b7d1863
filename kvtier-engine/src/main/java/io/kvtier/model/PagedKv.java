package io.kvtier.model;

import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvLayout;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Where the paged KV of every layer lives: one slab per KV group ({@link KvGroup}), each laid out
 * by its own {@link KvLayout} whose layers are the group's layers in ascending order. Layer
 * {@code l} of the model is layer {@link #layerInGroup}{@code [l]} of group
 * {@link #groupOfLayer}{@code [l]}; a chunk's block table for that group is
 * {@link SequenceChunk#blockTables()}{@code [group]}. A model with one group has one slab holding
 * every layer in model order.
 *
 * @param slabs        per group, block {@code b} at bytes {@code [b * layout.bytesPerBlock(), (b+1) * layout.bytesPerBlock())}
 * @param layouts      per group, its layers = the group's layer count
 * @param groupOfLayer per model layer, its group
 * @param layerInGroup per model layer, its index inside its group's layout
 */
public record PagedKv(MemorySegment[] slabs, KvLayout[] layouts, int[] groupOfLayer, int[] layerInGroup) {

    /** One slab holding every layer of {@code layout}. */
    public static PagedKv single(MemorySegment slab, KvLayout layout) {
        int[] groupOf = new int[layout.layers()];
        int[] inGroup = new int[layout.layers()];
        for (int l = 0; l < inGroup.length; l++) inGroup[l] = l;
        return new PagedKv(new MemorySegment[] {slab}, new KvLayout[] {layout}, groupOf, inGroup);
    }

    /**
     * The slabs of {@code groups}, one per group in group order.
     *
     * @throws IllegalArgumentException if the lists differ in length, a layout's layer count is not
     *         its group's, or the groups do not cover layers 0..n-1 exactly once
     */
    public static PagedKv of(List<KvGroup> groups, List<MemorySegment> slabs, List<KvLayout> layouts) {
        if (groups.size() != slabs.size() || groups.size() != layouts.size()) {
            throw new IllegalArgumentException(groups.size() + " KV groups with " + slabs.size() + " slabs and "
                    + layouts.size() + " layouts");
        }
        int layers = 0;
        for (KvGroup g : groups) layers += g.layers().length;
        int[] groupOf = new int[layers];
        int[] inGroup = new int[layers];
        java.util.Arrays.fill(groupOf, -1);
        for (KvGroup g : groups) {
            int[] ls = g.layers();
            if (layouts.get(g.index()).layers() != ls.length) {
                throw new IllegalArgumentException(g + " has " + ls.length + " layers but its layout " + layouts.get(g.index()));
            }
            for (int i = 0; i < ls.length; i++) {
                if (ls[i] >= layers || groupOf[ls[i]] >= 0) {
                    throw new IllegalArgumentException("layer " + ls[i] + " of " + g + " is outside 0.." + (layers - 1)
                            + " or in two groups");
                }
                groupOf[ls[i]] = g.index();
                inGroup[ls[i]] = i;
            }
        }
        return new PagedKv(slabs.toArray(MemorySegment[]::new), layouts.toArray(KvLayout[]::new), groupOf, inGroup);
    }

    /** Number of KV groups. */
    public int groups() {
        return slabs.length;
    }

    /** Model layers covered. */
    public int layers() {
        return groupOfLayer.length;
    }
}
