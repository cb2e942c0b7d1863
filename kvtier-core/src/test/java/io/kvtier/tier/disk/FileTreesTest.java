package io.kvtier.tier.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileTreesTest {
    @TempDir
    Path tmp;

    @Test
    void deletesANestedTreeAndNothingBesideIt() throws IOException {
        Path root = tmp.resolve("root");
        Files.createDirectories(root.resolve("a/b/c"));
        Files.write(root.resolve("a/one"), new byte[] {1});
        Files.write(root.resolve("a/b/c/two"), new byte[] {2, 2});
        Files.createDirectories(root.resolve("empty"));
        Path sibling = Files.write(tmp.resolve("sibling"), new byte[] {3});

        FileTrees.delete(root);

        assertThat(root).doesNotExist();
        assertThat(sibling).hasBinaryContent(new byte[] {3});
    }

    @Test
    void aMissingRootIsNotAnError() throws IOException {
        FileTrees.delete(tmp.resolve("never-made"));
        assertThat(FileTrees.deleteQuietly(tmp.resolve("never-made"))).isTrue();
    }

    @Test
    void aLinkIsDeletedNotFollowed() throws IOException {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path kept = Files.write(outside.resolve("kept"), new byte[] {7});
        Path root = Files.createDirectories(tmp.resolve("root"));
        Files.createSymbolicLink(root.resolve("link"), outside);

        FileTrees.delete(root);

        assertThat(root).doesNotExist();
        assertThat(kept).hasBinaryContent(new byte[] {7});
    }

    @Test
    void anUndeletableEntryThrowsLoudlyOrIsReportedQuietly() throws IOException {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path locked = Files.createDirectories(root.resolve("locked"));
        Files.write(locked.resolve("f"), new byte[] {1});
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            assumeFalse(Files.isWritable(locked), "running as root: permissions do not stop a delete");
            assertThatThrownBy(() -> FileTrees.delete(root)).isInstanceOf(IOException.class);
            assertThat(FileTrees.deleteQuietly(root)).isFalse();
            assertThat(locked.resolve("f")).exists();
        } finally {
            Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }
}
