package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** generate's summary of the disk tier tells the truth (a new user's trial, F3 and F7). */
class GenerateDiskSummaryTest {

    private static final String PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play outside"
            + " in the park with her friends. One day, she saw a big red ball under a tree.";
    private static final Pattern DISK = Pattern.compile("disk chunks (\\d+) used of (\\d+)( \\(the filesystem holds about (\\d+)\\))?");

    @TempDir
    Path dir;

    private CliRun generate(String... more) {
        String[] base = {"generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
            ReferenceRecords.tokenizer().toString(), "--prompt", PROMPT, "--max-tokens", "40", "--disk-cache-dir", dir.toString()};
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        CliRun r = CliRun.of(all);
        assertThat(r.code()).as(r.err()).isZero();
        return r;
    }

    private static Matcher disk(CliRun r) {
        Matcher m = DISK.matcher(r.err());
        assertThat(m.find()).as(r.err()).isTrue();
        return m;
    }

    /** With on-evict writes, the clean stop's writes come before the summary that counts them (F7: it said 0 of 3). */
    @Test
    void onEvictWritesAreCountedInTheSummary() throws IOException {
        Matcher m = disk(generate("--disk-write-policy", "on-evict"));
        long files;
        try (Stream<Path> all = Files.walk(dir)) {
            files = all.filter(f -> f.getFileName().toString().endsWith(".kvc")).count();
        }
        assertThat(files).as("the prompt's full blocks reach the disk").isPositive();
        assertThat(Long.parseLong(m.group(1))).isEqualTo(files);
    }

    /** A budget beyond the filesystem is said at start and in the summary (F3: "1 used of 43690" on a 40 KiB tmpfs). */
    @Test
    void aBudgetLargerThanTheFilesystemIsSaid() {
        var real = DiskOptions.usableSpace;
        DiskOptions.usableSpace = p -> 40 * 1024;
        try {
            CliRun r = generate("--disk-cache-bytes", "1G");
            assertThat(r.err()).contains("kvtier: --disk-cache-bytes 1G is more than the filesystem of " + dir
                    + " holds: about 40.0 KiB; once it is full, disk writes fail and are counted");
            Matcher m = disk(r);
            long total = Long.parseLong(m.group(2));
            assertThat(m.group(4)).as(r.err()).isNotNull();
            assertThat(Long.parseLong(m.group(4))).isEqualTo((long) ((double) total * 40 * 1024 / (1L << 30)));

            CliRun again = generate("--disk-cache-bytes", "1G");
            assertThat(again.err()).as("the tier's own files count as room").contains(" of them the tier's own files)");
        } finally {
            DiskOptions.usableSpace = real;
        }
        CliRun roomy = generate("--disk-cache-bytes", "1M");
        assertThat(roomy.err()).doesNotContain("is more than the filesystem");
        assertThat(disk(roomy).group(3)).isNull();
    }
}
