package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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

    /** Bytes one stories260K chunk file (16 tokens, 20,672 bytes) takes as the budget counts it: 6 units of 4 KiB. */
    private static final long CHUNK_FILE = 24 * 1024;
    private static final String WARNING = " is more than the filesystem of ";

    private CliRun generate(String... more) {
        return generateIn(dir, more);
    }

    private static CliRun generateIn(Path diskDir, String... more) {
        CliRun r = run(diskDir, more);
        assertThat(r.code()).as(r.err()).isZero();
        return r;
    }

    private static CliRun run(Path diskDir, String... more) {
        String[] base = {"generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
            ReferenceRecords.tokenizer().toString(), "--prompt", PROMPT, "--max-tokens", "40", "--disk-cache-dir", diskDir.toString()};
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return CliRun.of(all);
    }

    private static int count(String text, String part) {
        return text.split(Pattern.quote(part), -1).length - 1;
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

    /**
     * A load that fails on a damaged file drops that chunk and every chunk after it in its chain: their
     * files go too, so the summary's count, the directory and the next start agree (a new user's trial:
     * the summary said 3 chunks with 4 files on disk, and the next start adopted 4).
     */
    @Test
    void filesOfChunksDroppedAfterABadLoadAreDeleted() throws IOException {
        generateFor(100);   // stores the prompt's chunks and those the decode completed
        List<Path> files = kvcFiles();
        assertThat(files).as("the prompt's chunks are on disk").hasSizeGreaterThan(1);
        for (Path f : files) {   // one payload byte flipped in each
            byte[] b = Files.readAllBytes(f);
            b[b.length - 1] ^= 0x5A;
            Files.write(f, b);
        }
        CliRun second = generateFor(10);   // recomputes and stores the prompt's chunks only
        assertThat(second.err()).contains(", 1 load failure, ");
        assertThat(Long.parseLong(disk(second).group(1))).as(second.err()).isEqualTo(kvcFiles().size());
        assertThat(Long.parseLong(disk(generateFor(10)).group(1))).isEqualTo(kvcFiles().size());
    }

    private CliRun generateFor(int maxTokens) {
        CliRun r = CliRun.of("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompt", LONG_PROMPT, "--max-tokens", String.valueOf(maxTokens),
                "--disk-cache-dir", dir.toString());
        assertThat(r.code()).as(r.err()).isZero();
        return r;
    }

    private static final String LONG_PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play"
            + " outside in the park with her friends.";

    /**
     * Shard directories replaced by files: the writes fail with one line saying so, and nothing about
     * temporary files that were never made (a trial saw a "cannot delete temporary file" WARNING first).
     */
    @Test
    void shardDirectoriesReplacedByFilesGiveOnlyTheWriteFailureLine() throws IOException {
        generateFor(10);
        List<Path> shards = kvcFiles().stream().map(Path::getParent).distinct().toList();
        for (Path shard : shards) {
            try (Stream<Path> files = Files.list(shard)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(shard);
            Files.writeString(shard, "in the way");
        }
        CliRun r = generateFor(10);
        assertThat(r.err()).contains("is not a directory").doesNotContain("temporary file").doesNotContain("Exception");
    }

    private List<Path> kvcFiles() throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(f -> f.getFileName().toString().endsWith(".kvc")).toList();
        }
    }

    /** A budget beyond the filesystem is said at start and in the summary (F3: "1 used of 43690" on a 40 KiB tmpfs). */
    @Test
    void aBudgetLargerThanTheFilesystemIsSaid() {
        withUsableSpace(p -> 40 * 1024, () -> {
            CliRun r = generate("--disk-cache-bytes", "1G");
            assertThat(r.err()).contains("kvtier: --disk-cache-bytes 1G is more than the filesystem of " + dir
                    + " holds: about 40.0 KiB; once it is full, disk writes fail and are counted");
            Matcher m = disk(r);
            assertThat(m.group(4)).as(r.err()).isNotNull();
            // 40 KiB hold one chunk file; never fewer than the chunks the tier holds.
            assertThat(Long.parseLong(m.group(4))).isEqualTo(Math.max(Long.parseLong(m.group(1)), 40 * 1024 / CHUNK_FILE));

            CliRun again = generate("--disk-cache-bytes", "1G");
            assertThat(again.err()).as("the tier's own files count as room").contains(" of them the tier's own files)");
        });
        CliRun roomy = generate("--disk-cache-bytes", "1M");
        assertThat(roomy.err()).doesNotContain("is more than the filesystem");
        assertThat(disk(roomy).group(3)).isNull();
    }

    /**
     * F1 of a new user's trial: the warning came twice (the flags' check before the model loads
     * and the run's setup each printed it), and on a run then refused with exit 2 too.
     */
    @Test
    void theRoomWarningIsPrintedOnceAndNotForARefusedRun() {
        withUsableSpace(p -> 40 * 1024, () -> {
            CliRun r = generate("--disk-cache-bytes", "1G");
            assertThat(count(r.err(), WARNING)).as(r.err()).isEqualTo(1);
            CliRun refused = run(dir, "--disk-cache-bytes", "1G", "--cache-salt", "");
            assertThat(refused.code()).isEqualTo(2);
            assertThat(refused.err()).isEqualTo("kvtier: --cache-salt must be a non-empty string; leave the flag out for no salt\n");
        });
    }

    /**
     * A process that only reads the directory (another owns it) writes nothing there: no warning
     * about room for writes (a fifth trial: the line came right after "this process only reads it"),
     * and the summary gives the budget's capacity alone.
     */
    @Test
    void aReaderGetsNoRoomWarning() throws IOException {
        try (io.kvtier.tier.disk.DiskStore owner = DiskOwners.ownReferenceModel(dir)) {
            withUsableSpace(p -> 40 * 1024, () -> {
                CliRun r = generate("--disk-cache-bytes", "1G");
                assertThat(r.err()).containsOnlyOnce("only reads it").doesNotContain(WARNING);
                assertThat(disk(r).group(3)).as("nor the filesystem's room in the summary").isNull();
            });
        }
    }

    /** F1: a directory the tier has yet to create is measured on its nearest existing ancestor (it said nothing). */
    @Test
    void aDirectoryNotCreatedYetIsMeasuredOnItsNearestExistingAncestor() {
        Path fresh = dir.resolve("new").resolve("sub");
        List<Path> measured = new java.util.concurrent.CopyOnWriteArrayList<>();
        withUsableSpace(p -> {
            measured.add(p);
            return 40 * 1024;
        }, () -> {
            CliRun r = generateIn(fresh, "--disk-cache-bytes", "1G");
            assertThat(count(r.err(), "kvtier: --disk-cache-bytes 1G is more than the filesystem of " + fresh
                    + " holds: about 40.0 KiB; once it is full, disk writes fail and are counted\n")).as(r.err()).isEqualTo(1);
            assertThat(measured).isNotEmpty().allMatch(p -> p.equals(dir.toAbsolutePath()));
            assertThat(Files.isDirectory(fresh)).isTrue();
        });
    }

    /**
     * F2: the estimate divided the files' sizes (20,672 bytes each) by the 24 KiB a chunk takes in
     * the budget, so a full filesystem holding 42 chunks "held about 35": it counts the files as the
     * budget does, and never says fewer than the chunks held.
     */
    @Test
    void theEstimateCountsFilesAsTheBudgetDoesAndIsNeverBelowTheChunksHeld() {
        long held = Long.parseLong(disk(generate("--disk-cache-bytes", "1M")).group(1));
        assertThat(held).isPositive();
        withUsableSpace(p -> 0, () -> { // a full filesystem: only the tier's own files are room
            CliRun r = generate("--disk-cache-bytes", "1G");
            assertThat(r.err()).contains("holds: about " + Sizes.describe(held * CHUNK_FILE) + " ("
                    + Sizes.describe(held * CHUNK_FILE) + " of them the tier's own files)");
            Matcher m = disk(r);
            assertThat(Long.parseLong(m.group(1))).isEqualTo(held);
            assertThat(Long.parseLong(m.group(4))).isEqualTo(held);
        });
    }

    /** Runs {@code body} with {@link DiskOptions#usableSpace} replaced by {@code space}, then puts it back. */
    private static void withUsableSpace(java.util.function.ToLongFunction<Path> space, Runnable body) {
        var real = DiskOptions.usableSpace;
        DiskOptions.usableSpace = space;
        try {
            body.run();
        } finally {
            DiskOptions.usableSpace = real;
        }
    }
}
