package io.kvtier.replay.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class TraceTokensTest {

    private static final TraceTokens TOKENS = TraceTokens.DEFAULT;

    @Test
    void derivationIsPinned() {
        // Replay results (and any stored KV of a replay) depend on these exact values: changing
        // the derivation must be a deliberate act that updates this test.
        int[] block = new int[8];
        TOKENS.fillBlock(0, 8, block, 0);
        assertThat(block).containsExactly(GOLDEN_ID0);
        TOKENS.fillBlock(182_789, 8, block, 0);
        assertThat(block).containsExactly(GOLDEN_ID182789);
    }

    private static final int[] GOLDEN_ID0 = {10721, 22346, 25731, 28992, 22145, 16251, 31528, 1183};
    private static final int[] GOLDEN_ID182789 = {24724, 25505, 14335, 30164, 20763, 25628, 14877, 14927};

    @Test
    void equalIdsGiveEqualBlocksAndPartialBlocksArePrefixes() {
        TraceRequest a = new TraceRequest(0, 1300, 1, new int[] {7, 8, 9});
        TraceRequest b = new TraceRequest(5, 1536, 1, new int[] {7, 8, 9});
        TraceRequest c = new TraceRequest(9, 1100, 1, new int[] {7, 3, 9});
        int[] ta = TOKENS.promptTokens(a);
        int[] tb = TOKENS.promptTokens(b);
        int[] tc = TOKENS.promptTokens(c);
        assertThat(ta).hasSize(1300);
        // a's prompt, with its partial last block, is a true prefix of b's.
        assertThat(Arrays.copyOf(tb, 1300)).isEqualTo(ta);
        // block 0 shared with c, block 1 not; block 2 has the same id but is only compared as tokens
        assertThat(Arrays.copyOfRange(tc, 0, 512)).isEqualTo(Arrays.copyOfRange(ta, 0, 512));
        assertThat(Arrays.copyOfRange(tc, 512, 1024)).isNotEqualTo(Arrays.copyOfRange(ta, 512, 1024));
        assertThat(Arrays.copyOfRange(tc, 1024, 1100)).isEqualTo(Arrays.copyOfRange(ta, 1024, 1100));
        for (int p = 0; p < ta.length; p++) {
            assertThat(TOKENS.tokenAt(a, p)).isEqualTo(ta[p]);
        }
        assertThatThrownBy(() -> TOKENS.tokenAt(a, 1300)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void windowsMatchTheWholePrompt() {
        TraceRequest r = new TraceRequest(0, 3000, 1, new int[] {1, 2, 3, 4, 5, 6});
        int[] all = TOKENS.promptTokens(r);
        int[][] windows = {{0, 0}, {0, 1}, {100, 700}, {511, 513}, {1024, 1536}, {2999, 3000}, {0, 3000}};
        for (int[] w : windows) {
            int[] dst = new int[w[1] - w[0] + 3];
            TOKENS.promptTokens(r, w[0], w[1], dst, 3);
            assertThat(Arrays.copyOfRange(dst, 3, dst.length)).as("window %s", Arrays.toString(w))
                    .isEqualTo(Arrays.copyOfRange(all, w[0], w[1]));
        }
    }

    @Test
    void tokensCoverTheVocabularyUniformly() {
        long[] buckets = new long[10];
        int[] block = new int[512];
        for (int id = 0; id < 200; id++) {
            TOKENS.fillBlock(id, 512, block, 0);
            for (int t : block) {
                assertThat(t).isBetween(0, TraceTokens.DEFAULT_VOCAB - 1);
                buckets[t / 3200]++;
            }
        }
        // 102,400 draws, 10,240 expected per bucket; 5 sigma is about 480.
        for (long b : buckets) {
            assertThat(b).isBetween(9_700L, 10_800L);
        }
        TraceTokens small = new TraceTokens(2);
        TraceRequest r = new TraceRequest(0, 512, 1, new int[] {3});
        assertThat(small.promptTokens(r)).containsOnly(0, 1).contains(0, 1);
    }

    @Test
    void fullBlockKeysAreChainedAndSkipThePartialBlock() {
        BlockHasher hasher = BlockHasher.sha256(Namespace.of("trace", new KvLayout(1, 1, 1, 512)));
        TraceRequest a = new TraceRequest(0, 1300, 1, new int[] {7, 8, 9});
        TraceRequest b = new TraceRequest(0, 2048, 1, new int[] {7, 8, 10, 11});
        TraceRequest c = new TraceRequest(0, 1024, 1, new int[] {12, 8});
        BlockKey[] ka = TOKENS.fullBlockKeys(a, hasher, ExtraKeys.NONE);
        BlockKey[] kb = TOKENS.fullBlockKeys(b, hasher, ExtraKeys.NONE);
        BlockKey[] kc = TOKENS.fullBlockKeys(c, hasher, ExtraKeys.NONE);
        assertThat(ka).hasSize(2);
        assertThat(kb).hasSize(4);
        assertThat(kb[0]).isEqualTo(ka[0]);
        assertThat(kb[1]).isEqualTo(ka[1]);
        // same id 8 after a different first block: a different key, as the engine's chain gives
        assertThat(kc[1]).isNotEqualTo(ka[1]);
        // the engine's own hashing of the derived tokens gives the same keys
        int[] tokens = TOKENS.promptTokens(b);
        BlockKey parent = hasher.namespaceSeed();
        for (int i = 0; i < 4; i++) {
            parent = hasher.hash(parent, tokens, 512 * i, 512 * (i + 1), ExtraKeys.NONE);
            assertThat(kb[i]).isEqualTo(parent);
        }
        assertThat(TOKENS.fullBlockKeys(a, hasher, ExtraKeys.salt("tenant"))[0]).isNotEqualTo(ka[0]);
    }
}
