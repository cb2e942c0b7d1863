package io.kvtier.tier.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class DiskLayoutTest {

    private static final BlockKey KEY = new BlockKey(0xAB01020304050607L, 0x08090A0B0C0D0E0FL, 0x1011121314151617L,
            0xF8F9FAFBFCFDFEFFL);
    private static final String KEY_HEX = "ab0102030405060708090a0b0c0d0e0f1011121314151617f8f9fafbfcfdfeff";

    private final DiskLayout layout = new DiskLayout(Path.of("/data/kv/./cache"), Chunks.NS);

    @Test
    void hexIsTheDigestInByteOrderLowerCase() {
        assertThat(DiskLayout.hex(KEY)).isEqualTo(KEY_HEX).isEqualTo(KEY.toString());
    }

    @Test
    void fileOfAKeyIsUnderItsNamespaceAndFirstByte() {
        Path ns = Path.of("/data/kv/cache").resolve(Chunks.NS.toString());
        assertThat(layout.root()).isEqualTo(Path.of("/data/kv/cache"));
        assertThat(layout.namespaceDir()).isEqualTo(ns);
        assertThat(DiskLayout.shardOf(KEY)).isEqualTo(0xab);
        assertThat(layout.fileOf(KEY)).isEqualTo(ns.resolve("ab").resolve(KEY_HEX + ".kvc"));
        assertThat(layout.lockFile()).isEqualTo(ns.resolve(".lock"));
        assertThat(layout.tempFileOf(KEY, "4242x9f", 7))
                .isEqualTo(ns.resolve("ab").resolve("." + KEY_HEX + ".kvc.tmp-4242x9f-7"));
    }

    @Test
    void fileNamesParseBack() {
        assertThat(DiskLayout.keyOfFileName(KEY_HEX + ".kvc")).isEqualTo(KEY);
        assertThat(DiskLayout.keyOfFileName(KEY_HEX.toUpperCase() + ".kvc")).isNull();
        assertThat(DiskLayout.keyOfFileName(KEY_HEX.substring(1) + ".kvc")).isNull();
        assertThat(DiskLayout.keyOfFileName(KEY_HEX + ".tmp")).isNull();
        assertThat(DiskLayout.keyOfFileName("." + KEY_HEX + ".kvc.tmp-1-2")).isNull();
        String temp = layout.tempFileOf(KEY, "4242x9f", 7).getFileName().toString();
        assertThat(DiskLayout.isTempName(temp)).isTrue();
        assertThat(DiskLayout.tempTag(temp)).isEqualTo("4242x9f");
        assertThat(DiskLayout.isTempName(KEY_HEX + ".kvc")).isFalse();
        assertThat(DiskLayout.tempTag("." + KEY_HEX + ".kvc.tmp-1")).isEmpty();
        assertThat(DiskStore.PROCESS_TAG).startsWith(DiskStore.PID + "x").doesNotContain("-");
        assertThat(DiskLayout.isShardName("0f")).isTrue();
        assertThat(DiskLayout.isShardName("0F")).isFalse();
        assertThat(DiskLayout.isShardName("0g")).isFalse();
        assertThat(DiskLayout.isShardName("abc")).isFalse();
        for (int s = 0; s < 256; s++) {
            assertThat(DiskLayout.isShardName(DiskLayout.shardName(s))).isTrue();
        }
    }

    @Test
    void onlyPathsStrictlyInsideTheNamespaceDirectoryPass() {
        Path ns = layout.namespaceDir();
        assertThat(layout.requireInside(ns.resolve("ab/../cd/./x"))).isEqualTo(ns.resolve("cd/x"));
        assertThatThrownBy(() -> layout.requireInside(ns.resolve("ab/../.."))).hasMessageContaining("outside");
        assertThatThrownBy(() -> layout.requireInside(Path.of("/data/kv/cache"))).hasMessageContaining("outside");
        assertThatThrownBy(() -> layout.requireInside(Path.of("relative/x"))).hasMessageContaining("outside");
    }
}
