package io.kvtier.replay;

import io.kvtier.tier.CachePolicy;
import java.util.Locale;

/**
 * The host tier's caching policy in a replay: the eviction order ({@link CachePolicy}) and the
 * admission rule ({@link io.kvtier.offload.OffloadConfig#hostAdmitAfter()}).
 */
public enum Policy {

    /** Least recently used; every full block is admitted. */
    LRU("lru", "lru", 1),
    /** Adaptive Replacement Cache (Megiddo and Modha, FAST 2003); every full block is admitted. */
    ARC("arc", "arc", 1),
    /**
     * LRU, admitting a chunk only from its second use (a use = a request whose prompt contains
     * it), with a ghost list of the tier's capacity remembering first uses.
     */
    LRU_ADMIT2("lru-admit2", "lru", 2),
    /**
     * Hit density by age and class, learned online from hits and ghost hits
     * ({@link io.kvtier.tier.HitDensityPolicy}); every full block is admitted.
     */
    LHD("lhd", "lhd", 1),
    /**
     * LRU and hit density dueling: evicts as whichever would recently have hit more at the tier's
     * capacity, from shadow caches of both ({@link io.kvtier.tier.DuelingPolicy}); every full block is admitted.
     */
    DUEL("duel", "duel", 1);

    private final String cliName;
    private final String evictionPolicy;
    private final int admitAfter;

    Policy(String cliName, String evictionPolicy, int admitAfter) {
        this.cliName = cliName;
        this.evictionPolicy = evictionPolicy;
        this.admitAfter = admitAfter;
    }

    /** Name on the command line and in reports. */
    public String cliName() {
        return cliName;
    }

    /** Eviction policy name for {@link CachePolicy#named}. */
    public String evictionPolicy() {
        return evictionPolicy;
    }

    /** Uses a chunk needs before the host tier stores it. */
    public int admitAfter() {
        return admitAfter;
    }

    /** The policy named {@code name} ({@code lru}, {@code arc}, {@code lru-admit2}, {@code lhd}, {@code duel}). */
    public static Policy parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (Policy p : values()) {
            if (p.cliName.equals(n)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown policy '" + name + "' (expected lru, arc, lru-admit2, lhd or duel)");
    }

    @Override
    public String toString() {
        return cliName;
    }
}
