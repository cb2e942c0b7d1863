package io.kvtier.tier;

import static io.kvtier.tier.Keys.keys;
import static io.kvtier.tier.Keys.parents;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.StorePlan;
import io.kvtier.tier.StorePlan.Accepted;

/** Stores of integer-key chains into a {@link TierIndex} for policy tests, checking its invariants after each step. */
final class Stores {

    private Stores() {
    }

    /** Plans a store of chain {@code ids}, which must be accepted; the keys are left STORING. */
    static Accepted store(TierIndex tier, long... ids) {
        StorePlan plan = tier.prepareStore(keys(ids), parents(ids));
        assertThat(plan).isInstanceOf(Accepted.class);
        tier.checkInvariants();
        return (Accepted) plan;
    }

    /** Plans and completes a store of chain {@code ids}. */
    static Accepted stored(TierIndex tier, long... ids) {
        Accepted a = store(tier, ids);
        tier.completeStore(a.toStore(), true);
        tier.checkInvariants();
        return a;
    }
}
