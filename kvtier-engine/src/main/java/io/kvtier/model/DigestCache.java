package io.kvtier.model;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * SHA-256 digests of model data, remembered in a directory so that a multi-GB model is hashed
 * once, not at every start. An entry is keyed by the file's real path, size and modification
 * time: a file replaced or rewritten in place (new mtime or size) is hashed again. One small
 * text file per model ({@code <sha256 of the path>.digest}: a format line, path, size, mtime in
 * ns, digest), written to a temporary file and moved into place, so concurrent processes never
 * read half an entry. When the directory cannot be written, digests are computed and not
 * remembered.
 *
 * <p>A caller may give a check that reads the same bytes (GGUF: every weight finite): it runs
 * whenever the digest is computed, before the entry is written, so an entry also records that the
 * check passed and a large file is read at its first start only. The format line ({@link
 * #FORMAT}) names that rule: entries written before it are computed (and checked) again.
 */
public final class DigestCache {

    /** First line of an entry: entries of the digest-only format before it are not trusted. */
    static final String FORMAT = "kvtier-digest 2 (checked)";

    private final Path dir;
    private final AtomicInteger computed = new AtomicInteger();
    /** Why the last computed digest could not be remembered ({@link #unwritable()}), or null. */
    private volatile String unwritable;

    /** A cache in {@code dir} (created when first written); null remembers nothing ({@link #none()}). */
    public DigestCache(Path dir) {
        this.dir = dir;
    }

    /** A cache that remembers nothing: every call hashes (tests, and callers with no place to keep entries). */
    public static DigestCache none() {
        return new DigestCache(null);
    }

    /**
     * The default cache: {@code $KVTIER_CACHE_DIR/digests}, else {@code $XDG_CACHE_HOME/kvtier/digests},
     * else {@code ~/.cache/kvtier/digests} (the {@code digests} directory of {@link #cacheHome()}).
     */
    public static DigestCache defaultCache() {
        return new DigestCache(cacheHome().resolve("digests"));
    }

    /**
     * kvtier's cache directory (not created here): {@code $KVTIER_CACHE_DIR}, else
     * {@code $XDG_CACHE_HOME/kvtier}, else {@code ~/.cache/kvtier}.
     */
    public static Path cacheHome() {
        String own = System.getenv("KVTIER_CACHE_DIR");
        if (own != null && !own.isBlank()) {
            return Path.of(own);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("kvtier");
    }

    /**
     * Why the last digest this instance computed could not be remembered: the directory and the
     * system's reason ({@code /x/digests (Not a directory)}), or null if every entry was written.
     * A caller tells the user: until it is fixed, every start hashes the whole model again.
     */
    public String unwritable() {
        return unwritable;
    }

    /** Digests actually computed (not found in the cache) by this instance. */
    public int computed() {
        return computed.get();
    }

    /**
     * Hex SHA-256 of {@code data}, a region of {@code file} that is fixed by the file's content:
     * the cached value when the file's path, size and mtime match an entry, else computed and stored.
     */
    public String sha256(Path file, MemorySegment data) {
        return sha256(file, data, () -> { });
    }

    /**
     * The same, with {@code check} run whenever the digest is computed (not found in the cache),
     * before it is remembered: an exception from the check leaves no entry and reaches the caller.
     */
    public String sha256(Path file, MemorySegment data, Runnable check) {
        if (dir == null) {
            check.run();
            return compute(data);
        }
        Path real;
        BasicFileAttributes attrs;
        try {
            real = file.toRealPath();
            attrs = Files.readAttributes(real, BasicFileAttributes.class);
        } catch (IOException e) {
            check.run();
            return compute(data);
        }
        String key = FORMAT + "\n" + real + "\n" + attrs.size() + "\n"
                + attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS) + "\n";
        Path entry = dir.resolve(Sha256.of(real.toString().getBytes(StandardCharsets.UTF_8)) + ".digest");
        try {
            String stored = Files.readString(entry, StandardCharsets.UTF_8);
            if (stored.startsWith(key)) {
                String digest = stored.substring(key.length()).strip();
                if (digest.matches("[0-9a-f]{64}")) {
                    return digest;
                }
            }
        } catch (IOException e) {
            // no entry (or unreadable): compute below
        }
        check.run();
        String digest = compute(data);
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "entry", ".tmp");
            Files.writeString(tmp, key + digest + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, entry, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // A read-only cache only costs a re-hash at the next start: said by the caller, not fatal.
            unwritable = dir + " (" + (e instanceof java.nio.file.FileSystemException f && f.getReason() != null
                    ? f.getReason() : e.getClass().getSimpleName()) + ")";
        }
        return digest;
    }

    private String compute(MemorySegment data) {
        computed.incrementAndGet();
        return Sha256.of(data);
    }
}
