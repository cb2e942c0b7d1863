package io.kvtier.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A host tier made without a slab keeps its bookkeeping and refuses to hand out memory. */
class HostTierWithoutSlabTest {

    @Test
    void bookkeepingWorksAndTheSlabIsRefused() {
        KvEvents events = KvEvents.buffered();
        try (HostTier tier = HostTier.withoutSlab(1_000_000, CachePolicy.lru(), events)) {
            assertThat(tier.capacity()).isEqualTo(1_000_000);
            BlockKey seed = new BlockKey(0, 0, 0, 0);
            BlockKey k = new BlockKey(1, 2, 3, 4);
            assertThat(tier.index().prepareStore(List.of(k), List.of(seed))).isInstanceOf(StorePlan.Accepted.class);
            tier.index().completeStore(List.of(k), true);
            assertThat(tier.index().lookup(List.of(k)).readyChunks()).isEqualTo(1);
            assertThat(events.drain()).hasSize(1);
            assertThatThrownBy(tier::slab).isInstanceOf(IllegalStateException.class).hasMessageContaining("no slab");
            assertThat(tier.toString()).contains("no slab");
        }
    }
}
