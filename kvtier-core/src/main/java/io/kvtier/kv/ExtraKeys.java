package io.kvtier.kv;

import java.nio.charset.StandardCharsets;

/**
 * What besides tokens changes a block's KV and so enters every block key: the tenant's cache
 * salt today (adapter id and version when adapters exist). No salt and the empty salt are the
 * same namespace.
 *
 * @param cacheSalt tenant salt, never null ("" for none)
 */
public record ExtraKeys(String cacheSalt) {

    public static final ExtraKeys NONE = new ExtraKeys("");

    public ExtraKeys {
        cacheSalt = cacheSalt == null ? "" : cacheSalt;
    }

    /** Builds extra keys for an optional salt (null or "" mean none). */
    public static ExtraKeys salt(String salt) {
        return salt == null || salt.isEmpty() ? NONE : new ExtraKeys(salt);
    }

    /** Canonical bytes hashed into each block key; empty when there are no extra keys. */
    public byte[] bytes() {
        return cacheSalt.isEmpty() ? new byte[0] : ("salt=" + cacheSalt).getBytes(StandardCharsets.UTF_8);
    }
}
