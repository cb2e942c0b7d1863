package io.kvtier.tier;

import static io.kvtier.tier.Keys.ids;
import static io.kvtier.tier.Keys.k;
import static io.kvtier.tier.Keys.keys;
import static io.kvtier.tier.Keys.parents;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.StorePlan.Accepted;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: the part of a chain a tier can take now ({@link TierIndex#fittingPrefix}), stores that
 * never evict the chain's own earlier chunks ({@code keep}), and a chain's descendants.
 */
class TierIndexPrefixTest {

    private final TierIndex tier = new TierIndex("host", 4, CachePolicy.lru(), KvEvents.buffered());

    private void stored(long... ids) {
        Accepted a = (Accepted) tier.prepareStore(keys(ids), parents(ids));
        tier.completeStore(a.toStore(), true);
        tier.checkInvariants();
    }

    @Test
    void theFittingPrefixCountsFreeSlotsAndVictimsOutsideTheChainAndKeep() {
        stored(1, 2); // another chain, evictable
        stored(10); // the request's own first chunk, kept
        // 1 free slot + 2 evictable outside {10}: three of the chain 11..15 fit
        assertThat(tier.fittingPrefix(keys(11, 12, 13, 14, 15), Set.of(k(10)))).isEqualTo(3);
        // without keep, 10 could go too
        assertThat(tier.fittingPrefix(keys(11, 12, 13, 14, 15), Set.of())).isEqualTo(4);
        Accepted a = (Accepted) tier.prepareStore(keys(11, 12, 13), parents(11, 12, 13), Set.of(k(10)));
        assertThat(ids(a.evicted())).containsExactlyInAnyOrder(1L, 2L);
        assertThat(tier.state(k(10))).isEqualTo(TierIndex.EntryState.READY);
        tier.completeStore(a.toStore(), true);
        tier.checkInvariants();
    }

    @Test
    void pinnedAndStoringEntriesAreNoRoomAndPresentKeysNeedNoSlot() {
        stored(1, 2, 3);
        tier.prepareLoad(keys(1)); // pinned: not a victim
        tier.prepareStore(keys(20), parents(20)); // storing: not a victim, takes the free slot
        assertThat(tier.fittingPrefix(keys(30, 31, 32), Set.of())).isEqualTo(2); // victims 2 and 3
        // 2 is present: no slot for it, and it stops being a victim
        assertThat(tier.fittingPrefix(List.of(k(2), k(40), k(41)), Set.of())).isEqualTo(2);
        assertThat(tier.fittingPrefix(keys(30), Set.of(k(2), k(3)))).isZero();
    }

    @Test
    void keptKeysThatAreNotEvictableTakeNoRoomHoweverManyThereAre() {
        stored(1, 2); // 2 free slots, 2 evictable entries
        Set<io.kvtier.kv.BlockKey> keep = new java.util.HashSet<>(keys(1));
        for (long i = 100; i < 200; i++) {
            keep.add(k(i)); // a long chain's earlier chunks, no longer in this tier: no room of anyone's
        }
        // Counted as if all 101 kept keys were evictable nothing would fit; exactly, only 1 is.
        assertThat(tier.fittingPrefix(keys(11, 12, 13, 14), keep)).isEqualTo(3);
        assertThat(tier.fittingPrefix(keys(11, 12), keep)).isEqualTo(2);
        assertThat(tier.fittingPrefix(keys(11, 12), Set.of(k(1)))).as("fits even if the kept key were evictable").isEqualTo(2);
        assertThat(tier.fittingPrefix(keys(11, 12, 13, 14), Set.of(k(1), k(2)))).isEqualTo(2);
    }

    @Test
    void aKeyBeingRemovedEndsThePrefix() {
        stored(1, 2);
        tier.prepareLoad(keys(2));
        tier.remove(k(2)); // pinned: REMOVING until its load completes
        assertThat(tier.fittingPrefix(keys(1, 2, 3), Set.of())).isEqualTo(1);
    }

    @Test
    void descendantsFollowTheRecordedParents() {
        stored(1, 2, 3);
        Accepted branch = (Accepted) tier.prepareStore(List.of(k(9)), List.of(k(2))); // a second child of 2, storing
        assertThat(ids(tier.descendantsOf(k(2)))).containsExactlyInAnyOrder(3L, 9L);
        assertThat(ids(tier.descendantsOf(k(1)))).containsExactlyInAnyOrder(2L, 3L, 9L);
        assertThat(tier.descendantsOf(k(3))).isEmpty();
        tier.completeStore(branch.toStore(), true);
    }

    /**
     * The held prefixes of a store: the chunks before it in its chain that this tier holds, found
     * through this tier's parents and, past a chunk it does not hold, another tier's (F3 of a new
     * user's trial: the disk evicted a chain's head to store a chunk after it).
     */
    @Test
    void heldPrefixesWalkThroughChunksHeldElsewhere() {
        stored(1); // the head, held here; 2 is held only elsewhere (the host), 3 is to be stored
        stored(50, 51); // another chain
        java.util.function.UnaryOperator<io.kvtier.kv.BlockKey> elsewhere = key -> key.equals(k(2)) ? k(1) : null;
        assertThat(ids(List.copyOf(tier.heldPrefixes(List.of(k(2)), elsewhere)))).containsExactly(1L);
        assertThat(tier.heldPrefixes(List.of(k(2)), key -> null)).as("the walk ends at a chunk nobody knows").isEmpty();
        assertThat(ids(List.copyOf(tier.heldPrefixes(List.of(k(51)), elsewhere)))).containsExactlyInAnyOrder(50L, 51L);

        TierIndex one = new TierIndex("disk", 1, CachePolicy.lru(), KvEvents.buffered());
        Accepted head = (Accepted) one.prepareStore(keys(1), parents(1));
        one.completeStore(head.toStore(), true);
        Set<io.kvtier.kv.BlockKey> keep = one.heldPrefixes(List.of(k(2)), elsewhere);
        assertThat(one.fittingPrefix(keys(3), keep)).isZero();
        assertThat(one.prepareStore(keys(3), parents(3), keep)).isInstanceOf(StorePlan.Refused.class);
        assertThat(one.lookup(keys(1, 2, 3))).isEqualTo(new TierLookup.Hit(1));
        assertThat(one.evictions()).isZero();
        one.checkInvariants();
    }
}
