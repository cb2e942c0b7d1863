package io.kvtier.cli;

import java.nio.file.Path;

/**
 * Whether the filesystem of {@code bench offload}'s directory has room for the files its disk
 * figures hold at once, checked before the first figure. Without it a 2 MB filesystem failed
 * after the host table (the bandwidth figure's write error) or as an internal error (the TTFT
 * figures' disk tier had stored nothing, "did not hit both tiers"), and a typo such as
 * {@code --disk-mib-per-size 99999999999} wrote until the disk was full (up to 2^20 files a size).
 */
final class BenchDiskRoom {

    private BenchDiskRoom() {
    }

    /**
     * @param dir            where the figures write (the user's {@code --disk-cache-dir}, else the fresh temp dir)
     * @param given          whether {@code dir} is the user's
     * @param bandwidthBytes the most the bandwidth figures (host/disk, cold) hold at once, 0 when none runs
     * @param diskMib        {@code --disk-mib-per-size}, for the message
     * @param ttftBytes      the TTFT figures' disk tier's chunk files (the prefix's KV), 0 when they do not run;
     *                       the chunk files already under {@code dir/ttft} (a former run's) count as room
     * @throws BadInputException one line naming what needs the room and what to change
     */
    static void check(Path dir, boolean given, long bandwidthBytes, long diskMib, long ttftBytes) {
        Path existing = DiskOptions.existingAncestor(dir);
        long free = existing == null ? -1 : DiskOptions.usableSpace.applyAsLong(existing);
        if (free < 0) {
            return; // unknown: the figures' own errors say it
        }
        String where = given ? "--disk-cache-dir " + dir : "the temp dir " + dir;
        String elsewhere = given ? "another --disk-cache-dir" : "a --disk-cache-dir on a filesystem with room";
        if (bandwidthBytes > free) {
            throw new BadInputException("bench offload: the disk figures hold up to " + Sizes.describe(bandwidthBytes)
                    + " of files at once (both sides of one chunk size, --disk-mib-per-size " + diskMib + "), and the "
                    + "filesystem of " + where + " has " + Sizes.describe(free) + " free: give a smaller --disk-mib-per-size, or "
                    + elsewhere);
        }
        if (ttftBytes > free + DiskOptions.ownFiles(dir.resolve("ttft"))) {
            throw new BadInputException("bench offload: the TTFT figures' disk tier holds the prefix's KV, "
                    + Sizes.describe(ttftBytes) + " of chunk files, and the filesystem of " + where + " has "
                    + Sizes.describe(free) + " free: give " + elsewhere + ", or --skip-ttft");
        }
    }
}
