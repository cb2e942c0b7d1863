package io.kvtier.tier;

import static io.kvtier.tier.Keys.ids;
import static io.kvtier.tier.Keys.k;
import static io.kvtier.tier.Keys.keys;
import static io.kvtier.tier.Keys.parents;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.tier.TierIndex.EntryState;

import io.kvtier.tier.StorePlan;
import io.kvtier.tier.StorePlan.Accepted;
import io.kvtier.tier.StorePlan.Refused;
import java.util.List;
import org.junit.jupiter.api.Test;

class TierIndexTest {

    private final KvEvents events = KvEvents.buffered();

    private TierIndex lruTier(int capacity) {
        return new TierIndex("host", capacity, CachePolicy.lru(), events);
    }

    private static Accepted accepted(StorePlan plan) {
        assertThat(plan).isInstanceOf(Accepted.class);
        return (Accepted) plan;
    }

    private static StorePlan store(TierIndex tier, long... ids) {
        StorePlan plan = tier.prepareStore(keys(ids), parents(ids));
        tier.checkInvariants();
        return plan;
    }

    /** Plans and completes a store of a chain. */
    private static void stored(TierIndex tier, long... ids) {
        Accepted a = accepted(store(tier, ids));
        tier.completeStore(a.toStore(), true);
        tier.checkInvariants();
    }

    @Test
    void m01_lruSequence() {
        TierIndex tier = lruTier(4);

        Accepted first = accepted(store(tier, 1, 2));
        assertThat(ids(first.toStore())).containsExactly(1L, 2L);
        assertThat(first.slots()).containsExactly(0, 1);
        assertThat(first.evicted()).isEmpty();
        assertThat(tier.lookup(keys(1))).isEqualTo(new TierLookup.Pending(0)); // not readable until completed
        assertThat(tier.lookup(keys(1)).readyChunks()).isZero();

        tier.completeStore(first.toStore(), true);
        tier.checkInvariants();
        assertThat(tier.lookup(keys(1))).isEqualTo(new TierLookup.Hit(1));
        assertThat(tier.lookup(keys(1, 2))).isEqualTo(new TierLookup.Hit(2));
        assertThat(tier.lookup(keys(1, 2, 3))).isEqualTo(new TierLookup.Hit(2));

        Accepted second = accepted(store(tier, 2, 3, 4, 5));
        assertThat(ids(second.toStore())).containsExactly(3L, 4L, 5L);
        assertThat(ids(second.evicted())).containsExactly(1L); // not 2: it is among the keys being stored
        assertThat(second.slots()).containsExactly(0, 2, 3);   // 1's slot was freed first
        assertThat(tier.lookup(keys(1))).isEqualTo(new TierLookup.Miss());
        assertThat(tier.lookup(keys(2, 3))).isEqualTo(new TierLookup.Pending(1));

        StorePlan whileStoring = store(tier, 1, 6);
        assertThat(whileStoring).isInstanceOf(Refused.class);
        assertThat(((Refused) whileStoring).reason()).contains("tier full");
        assertThat(tier.refusedStores()).isEqualTo(1);
        assertThat(tier.state(k(2))).isEqualTo(EntryState.READY); // the refusal evicted nothing

        tier.completeStore(second.toStore(), true);
        tier.checkInvariants();
        assertThat(tier.lookup(keys(2, 3, 4, 5))).isEqualTo(new TierLookup.Hit(4));

        tier.touch(keys(2, 3)); // a request hits [2,3] and loads them
        int[] loadSlots = tier.prepareLoad(keys(2, 3));
        tier.checkInvariants();
        assertThat(loadSlots).containsExactly(1, 0);
        assertThat(tier.pinnedCount()).isEqualTo(2);
        assertThat(tier.lookup(keys(2, 3))).isEqualTo(new TierLookup.Hit(2)); // still readable while loading

        assertThat(store(tier, 6, 7, 8)).isInstanceOf(Refused.class); // needs 2 or 3's slot
        assertThat(tier.refusedStores()).isEqualTo(2);
        assertThat(tier.lookup(keys(2, 3, 4, 5))).isEqualTo(new TierLookup.Hit(4));

        tier.completeLoad(keys(2, 3));
        tier.checkInvariants();
        assertThat(tier.pinnedCount()).isZero();

        Accepted third = accepted(store(tier, 2, 6, 7, 8)); // 2 is present: skipped and touched
        assertThat(ids(third.toStore())).containsExactly(6L, 7L, 8L);
        assertThat(ids(third.evicted())).containsExactly(5L, 4L, 3L);
        tier.completeStore(third.toStore(), false); // failed store: only the keys not yet ready go
        tier.checkInvariants();
        assertThat(tier.lookup(keys(2, 6))).isEqualTo(new TierLookup.Hit(1));
        assertThat(tier.state(k(6))).isEqualTo(EntryState.ABSENT);
        assertThat(tier.freeSlots()).isEqualTo(3);
        assertThat(tier.readyCount()).isEqualTo(1);
    }

    @Test
    void m04_evictionIsAllOrNothingAndSparesStoringAndLoadingEntries() {
        TierIndex tier = lruTier(4);
        stored(tier, 1);
        stored(tier, 2);
        Accepted pending = accepted(store(tier, 3)); // 3 stays STORING
        tier.prepareLoad(keys(1));                  // 1 is LOADING
        events.drain();

        StorePlan refused = store(tier, 10, 11, 12); // needs 2 more slots, only 2 is evictable
        assertThat(refused).isInstanceOf(Refused.class);
        assertThat(tier.state(k(1))).isEqualTo(EntryState.LOADING);
        assertThat(tier.state(k(2))).isEqualTo(EntryState.READY);
        assertThat(tier.state(k(3))).isEqualTo(EntryState.STORING);
        assertThat(tier.freeSlots()).isEqualTo(1);
        assertThat(tier.evictions()).isZero();
        assertThat(events.drain()).isEmpty();

        StorePlan tooLarge = store(tier, 20, 21, 22, 23, 24); // larger than the whole tier
        assertThat(((Refused) tooLarge).reason()).contains("exceeds the tier capacity of 4");
        assertThat(tier.state(k(2))).isEqualTo(EntryState.READY);
        assertThat(tier.refusedStores()).isEqualTo(2);

        Accepted fits = accepted(store(tier, 10, 11)); // needs exactly the one evictable entry
        assertThat(ids(fits.evicted())).containsExactly(2L);
        assertThat(tier.state(k(1))).isEqualTo(EntryState.LOADING);
        assertThat(tier.state(k(3))).isEqualTo(EntryState.STORING);

        tier.completeStore(pending.toStore(), true);
        tier.completeStore(fits.toStore(), true);
        tier.completeLoad(keys(1));
        tier.checkInvariants();
        assertThat(tier.readyCount()).isEqualTo(4);
    }

    @Test
    void m05_eventsOnlyForRealChangesWithParents() {
        TierIndex tier = lruTier(4);

        Accepted a = accepted(store(tier, 1, 2));
        assertThat(events.drain()).isEmpty(); // nothing announced before completion
        tier.completeStore(a.toStore(), true);
        assertThat(events.drain()).containsExactly(new KvEvent.BlockStored(1, keys(1, 2), k(0), "host"));

        tier.completeStore(accepted(store(tier, 2, 3)).toStore(), true); // 2 already present
        assertThat(events.drain()).containsExactly(new KvEvent.BlockStored(2, keys(3), k(2), "host"));

        tier.completeStore(accepted(store(tier, 4)).toStore(), false); // failed, never announced
        assertThat(events.drain()).isEmpty();

        Accepted evicting = accepted(store(tier, 4, 5)); // 1 free slot: evicts the LRU entry
        List<KvEvent> evictionEvents = events.drain();
        assertThat(evictionEvents).hasSize(1);
        assertThat(evictionEvents.getFirst()).isEqualTo(new KvEvent.BlockRemoved(3, evicting.evicted(), "host"));
        assertThat(evicting.evicted()).hasSize(1);
        tier.completeStore(evicting.toStore(), true);
        assertThat(events.drain()).containsExactly(new KvEvent.BlockStored(4, keys(4, 5), k(3), "host"));

        // Two chains in one store: one event per run, each with its own parent.
        tier.clear();
        events.drain();
        tier.completeStore(accepted(tier.prepareStore(keys(10, 20, 21), keys(9, 19, 20))).toStore(), true);
        assertThat(events.drain()).containsExactly(
                new KvEvent.BlockStored(6, keys(10), k(9), "host"),
                new KvEvent.BlockStored(7, keys(20, 21), k(19), "host"));

        assertThat(tier.remove(k(20))).isTrue();
        assertThat(tier.remove(k(20))).isFalse(); // once per change
        assertThat(events.drain()).containsExactly(new KvEvent.BlockRemoved(8, keys(20), "host"));

        tier.clear();
        tier.clear(); // nothing left: no second event
        assertThat(events.drain()).containsExactly(new KvEvent.AllCleared(9, "host"));
        assertThat(events.lastSeq()).isEqualTo(9);
        tier.checkInvariants();
    }

    @Test
    void lookupStopsAtFirstMissingKeyAndReportsPendingOnlyForStoringKeys() {
        TierIndex tier = lruTier(4);
        assertThat(tier.lookup(keys())).isEqualTo(new TierLookup.Miss());
        stored(tier, 1, 2);
        Accepted storing = accepted(store(tier, 3));
        assertThat(tier.lookup(keys(1, 2, 3, 4))).isEqualTo(new TierLookup.Pending(2));
        assertThat(tier.lookup(keys(2))).isEqualTo(new TierLookup.Hit(1));
        assertThat(tier.lookup(keys(5, 1))).isEqualTo(new TierLookup.Miss());
        tier.completeStore(storing.toStore(), true);
        assertThat(tier.lookup(keys(1, 2, 3, 4))).isEqualTo(new TierLookup.Hit(3));
    }

    @Test
    void lookupDoesNotChangeRecency() {
        TierIndex tier = lruTier(2);
        stored(tier, 1);
        stored(tier, 2);
        tier.lookup(keys(1));
        assertThat(ids(accepted(store(tier, 3)).evicted())).containsExactly(1L);
    }

    @Test
    void keysBeingStoredByAnotherJobAreSkipped() {
        TierIndex tier = lruTier(4);
        Accepted first = accepted(store(tier, 1, 2));
        Accepted second = accepted(store(tier, 1, 2, 3));
        assertThat(ids(second.toStore())).containsExactly(3L);
        tier.completeStore(first.toStore(), true);
        tier.completeStore(second.toStore(), true);
        tier.checkInvariants();
        assertThat(tier.lookup(keys(1, 2, 3))).isEqualTo(new TierLookup.Hit(3));
    }

    @Test
    void partialCompletionKeepsTheGoodPrefixOfAStore() {
        TierIndex tier = lruTier(4);
        Accepted a = accepted(store(tier, 1, 2, 3));
        tier.completeStore(a.toStore().subList(0, 1), true);
        tier.completeStore(a.toStore().subList(1, 3), false);
        tier.checkInvariants();
        assertThat(tier.lookup(keys(1, 2, 3))).isEqualTo(new TierLookup.Hit(1));
        assertThat(tier.freeSlots()).isEqualTo(3);
    }

    @Test
    void removeOfPinnedEntryHidesItAtOnceAndFreesItsSlotAfterTheLoad() {
        TierIndex tier = lruTier(2);
        stored(tier, 1, 2);
        tier.prepareLoad(keys(1, 2));
        events.drain();
        assertThat(tier.remove(k(2))).isTrue();
        tier.checkInvariants();
        assertThat(events.drain()).containsExactly(new KvEvent.BlockRemoved(2, keys(2), "host"));
        assertThat(tier.state(k(2))).isEqualTo(EntryState.REMOVING);
        assertThat(tier.lookup(keys(1, 2))).isEqualTo(new TierLookup.Hit(1));
        assertThat(tier.freeSlots()).isZero();
        assertThat(store(tier, 2)).isInstanceOf(Refused.class); // its old slot is still being read

        tier.completeLoad(keys(1, 2));
        tier.checkInvariants();
        assertThat(tier.state(k(2))).isEqualTo(EntryState.ABSENT);
        assertThat(tier.freeSlots()).isEqualTo(1);
        assertThat(events.drain()).isEmpty(); // already announced
        stored(tier, 2);
        assertThat(tier.lookup(keys(1, 2))).isEqualTo(new TierLookup.Hit(2));
    }

    @Test
    void clearKeepsSlotsOfInFlightTransfersUntilTheyComplete() {
        TierIndex tier = lruTier(4);
        stored(tier, 1);
        stored(tier, 2);
        tier.prepareLoad(keys(2));
        Accepted storing = accepted(store(tier, 3));
        events.drain();

        tier.clear();
        tier.checkInvariants();
        assertThat(events.drain()).containsExactly(new KvEvent.AllCleared(3, "host"));
        assertThat(tier.lookup(keys(1))).isEqualTo(new TierLookup.Miss());
        assertThat(tier.lookup(keys(2))).isEqualTo(new TierLookup.Miss());
        assertThat(tier.lookup(keys(3))).isEqualTo(new TierLookup.Miss()); // not pending: it will be discarded
        assertThat(tier.freeSlots()).isEqualTo(2);
        assertThat(tier.pinnedCount()).isEqualTo(1);
        assertThat(tier.storingCount()).isEqualTo(1);

        tier.completeStore(storing.toStore(), true); // completes, but the entry was cleared
        tier.completeLoad(keys(2));
        tier.checkInvariants();
        assertThat(tier.freeSlots()).isEqualTo(4);
        assertThat(tier.lookup(keys(3))).isEqualTo(new TierLookup.Miss());
        assertThat(events.drain()).isEmpty();
    }

    @Test
    void misuseIsReportedAndChangesNothing() {
        TierIndex tier = lruTier(4);
        Accepted storing = accepted(store(tier, 1));
        assertThatThrownBy(() -> tier.prepareLoad(keys(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("STORING");
        assertThatThrownBy(() -> tier.completeLoad(keys(1))).isInstanceOf(IllegalStateException.class);
        tier.completeStore(storing.toStore(), true);
        assertThatThrownBy(() -> tier.completeStore(keys(1), true)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not storing");
        assertThatThrownBy(() -> tier.prepareStore(keys(5, 5), parents(5, 5)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tier.prepareLoad(keys(1, 9))).isInstanceOf(IllegalStateException.class);
        assertThat(tier.pinnedCount()).isZero(); // the good key was not pinned either
        tier.checkInvariants();
    }

    @Test
    void checkInvariantsNamesTheBrokenInvariant() {
        CachePolicy policy = CachePolicy.lru();
        TierIndex tier = new TierIndex("host", 4, policy, events);
        stored(tier, 1);
        policy.remove(k(1)); // corrupt the bookkeeping from outside
        assertThatThrownBy(tier::checkInvariants).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("policy members = readable entries");
    }
}
