package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Where the disk tier keeps its files, and the one place that decides whether a path may be
 * written or deleted. Layout under the configured root:
 *
 * <pre>
 * &lt;root&gt;/&lt;namespace hex, 64 digits&gt;/.lock                       lock of the owning process
 * &lt;root&gt;/&lt;namespace hex&gt;/&lt;key hex digits 0-1&gt;/&lt;key hex, 64&gt;.kvc   one chunk
 * &lt;root&gt;/&lt;namespace hex&gt;/&lt;key hex digits 0-1&gt;/.&lt;key hex&gt;.kvc.tmp-&lt;process tag&gt;-&lt;n&gt;   a write in progress
 * </pre>
 *
 * Hex digits are lower case, in digest byte order ({@link BlockKey#toString()}). Different
 * namespaces (models, block sizes, formats) never share a directory; the 256 shard directories
 * keep directories small. A layout instance only ever hands out paths inside its own namespace
 * directory, and {@link #requireInside} rejects any other.
 */
public final class DiskLayout {

    /** File name extension of a chunk file. */
    public static final String EXTENSION = ".kvc";
    /** Name of the lock file in a namespace directory. */
    public static final String LOCK_FILE = ".lock";
    /** Marks a temporary file: {@code .<key hex>.kvc.tmp-<process tag>-<n>}. */
    static final String TMP_MARK = EXTENSION + ".tmp-";

    private static final HexFormat HEX = HexFormat.of();
    private static final int KEY_HEX = 2 * BlockKey.BYTES;

    private final Path root;
    private final BlockKey namespace;
    private final Path namespaceDir;
    private final Path[] shardDirs = new Path[256];

    /**
     * @param root      the configured directory (made absolute and normalized; symbolic links in
     *                  it are the user's business and are resolved by {@link DiskStore#open})
     * @param namespace the engine's namespace digest
     */
    public DiskLayout(Path root, BlockKey namespace) {
        this.root = root.toAbsolutePath().normalize();
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.namespaceDir = this.root.resolve(hex(namespace));
        for (int i = 0; i < shardDirs.length; i++) {
            shardDirs[i] = namespaceDir.resolve(shardName(i));
        }
    }

    /** The root directory (absolute, normalized). */
    public Path root() {
        return root;
    }

    /** The namespace this layout serves. */
    public BlockKey namespace() {
        return namespace;
    }

    /** {@code <root>/<namespace hex>}. */
    public Path namespaceDir() {
        return namespaceDir;
    }

    /** {@code <root>/<namespace hex>/.lock}. */
    public Path lockFile() {
        return namespaceDir.resolve(LOCK_FILE);
    }

    /** Shard of a key: its first byte, 0..255. */
    public static int shardOf(BlockKey key) {
        return (int) (key.w0() >>> 56);
    }

    /** Name of shard directory {@code shard} (two lower-case hex digits). */
    public static String shardName(int shard) {
        return HEX.toHexDigits((byte) shard);
    }

    /** {@code <root>/<namespace hex>/<shard>}. */
    public Path shardDir(int shard) {
        return shardDirs[shard];
    }

    /** The chunk file of a key: {@code <root>/<namespace hex>/<first 2 hex>/<key hex>.kvc}. */
    public Path fileOf(BlockKey key) {
        return shardDirs[shardOf(key)].resolve(hex(key) + EXTENSION);
    }

    /**
     * A temporary name beside the key's file, unique per writing process ({@code processTag}: its
     * pid and a random number, so that a process reusing a dead one's pid, as every PID 1 of a
     * container does, still tells the dead one's leftovers from its own writes) and sequence
     * number.
     */
    Path tempFileOf(BlockKey key, String processTag, long seq) {
        return shardDirs[shardOf(key)].resolve("." + hex(key) + TMP_MARK + processTag + "-" + seq);
    }

    /** 64 lower-case hex digits of a key, in digest byte order. */
    public static String hex(BlockKey key) {
        byte[] out = new byte[KEY_HEX];
        putHex(out, 0, key.w0());
        putHex(out, 16, key.w1());
        putHex(out, 32, key.w2());
        putHex(out, 48, key.w3());
        return new String(out, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private static void putHex(byte[] out, int at, long word) {
        for (int i = 15; i >= 0; i--) {
            out[at + i] = (byte) "0123456789abcdef".charAt((int) (word & 0xf));
            word >>>= 4;
        }
    }

    /** The key named by a chunk file name ({@code <64 hex>.kvc}), or null if the name is not one. */
    static BlockKey keyOfFileName(String name) {
        if (name.length() != KEY_HEX + EXTENSION.length() || !name.endsWith(EXTENSION)) {
            return null;
        }
        for (int i = 0; i < KEY_HEX; i++) {
            if (!isLowerHex(name.charAt(i))) {
                return null;
            }
        }
        return new BlockKey(HEX.fromHexDigitsToLong(name, 0, 16), HEX.fromHexDigitsToLong(name, 16, 32),
                HEX.fromHexDigitsToLong(name, 32, 48), HEX.fromHexDigitsToLong(name, 48, 64));
    }

    /** Whether a file name is a temporary file of a chunk write. */
    static boolean isTempName(String name) {
        return name.startsWith(".") && name.contains(TMP_MARK);
    }

    /** Process tag in a temporary file name (between the mark and the last dash), or "" if it has none. */
    static String tempTag(String name) {
        int at = name.lastIndexOf(TMP_MARK);
        int dash = name.lastIndexOf('-');
        return at < 0 || dash < at + TMP_MARK.length() ? "" : name.substring(at + TMP_MARK.length(), dash);
    }

    private static boolean isLowerHex(char c) {
        return c >= '0' && c <= '9' || c >= 'a' && c <= 'f';
    }

    /** Whether a directory name is a shard name (two lower-case hex digits). */
    static boolean isShardName(String name) {
        return name.length() == 2 && isLowerHex(name.charAt(0)) && isLowerHex(name.charAt(1));
    }

    /**
     * Returns {@code path} (absolute, normalized) if it lies strictly inside this namespace's
     * directory, which is inside the root; every path the disk tier writes or deletes passes here.
     *
     * @throws IllegalArgumentException if the path is the namespace directory itself or escapes it
     *                                  (e.g. through {@code ..})
     */
    public Path requireInside(Path path) {
        Path p = path.toAbsolutePath().normalize();
        if (!p.startsWith(namespaceDir) || p.equals(namespaceDir) || !p.startsWith(root)) {
            throw new IllegalArgumentException("disk tier: refusing to write or delete " + path
                    + ": it is outside " + namespaceDir);
        }
        return p;
    }

    @Override
    public String toString() {
        return "DiskLayout[" + namespaceDir + "]";
    }
}
