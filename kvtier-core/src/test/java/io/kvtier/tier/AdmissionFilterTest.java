package io.kvtier.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import org.junit.jupiter.api.Test;

class AdmissionFilterTest {

    private static BlockKey key(int i) {
        return new BlockKey(0, 0, 0, i);
    }

    @Test
    void oneUseAdmitsEverythingAndRemembersNothing() {
        AdmissionFilter f = AdmissionFilter.admitAll();
        assertThat(f.use(key(1))).isTrue();
        assertThat(f.ghostCount()).isZero();
    }

    @Test
    void secondUseAdmitsAndTheGhostListIsBounded() {
        AdmissionFilter f = new AdmissionFilter(2, 2);
        assertThat(f.use(key(1))).isFalse();
        assertThat(f.use(key(1))).isTrue();
        assertThat(f.ghostCount()).as("an admitted key leaves the ghost list").isZero();
        assertThat(f.use(key(2))).isFalse();
        assertThat(f.use(key(3))).isFalse();
        assertThat(f.use(key(4))).isFalse(); // pushes out key 2, the least recently used ghost
        assertThat(f.ghostCount()).isEqualTo(2);
        assertThat(f.use(key(2))).as("key 2 was forgotten: this is its first use again").isFalse();
        assertThat(f.use(key(4))).isTrue();
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> new AdmissionFilter(0, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AdmissionFilter(2, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
