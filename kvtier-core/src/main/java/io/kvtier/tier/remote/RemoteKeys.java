package io.kvtier.tier.remote;

import io.kvtier.kv.BlockKey;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Names of chunks in the remote store: {@code kvt:v1:<tenant>:<namespace prefix>:<chunk key hex>}.
 * No hash tags, so the chunks of one long prefix spread over every shard of a cluster. The tenant
 * leads so that an ACL key pattern ({@code ~kvt:v1:<tenant>:*}) confines a tenant to its keys; the
 * namespace prefix (16 hex digits of the namespace digest) keeps models apart (the full namespace
 * is in every value's header and checked on every read).
 */
public final class RemoteKeys {

    private static final Pattern TENANT = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    private final String prefix;

    /**
     * @param tenant    1 to 64 characters of [A-Za-z0-9_.-]
     * @param namespace the engine's namespace digest
     * @throws IllegalArgumentException for a tenant with other characters (':' would let one
     *                                  tenant's keys look like another's)
     */
    public RemoteKeys(String tenant, BlockKey namespace) {
        String problem = tenantProblem(tenant);
        if (problem != null) {
            throw new IllegalArgumentException("remote tenant " + problem);
        }
        this.prefix = "kvt:v1:" + tenant + ":" + HexFormat.of().toHexDigits(namespace.w0()) + ":";
    }

    /**
     * What is wrong with {@code tenant} ("must be 1 to 64 characters of ..., got '...'", control
     * characters shown escaped), or null if it is a valid tenant.
     */
    public static String tenantProblem(String tenant) {
        if (TENANT.matcher(tenant).matches()) {
            return null;
        }
        StringBuilder shown = new StringBuilder();
        tenant.codePoints().forEach(c -> shown.append(Character.isISOControl(c) ? String.format("\\u%04x", c) : Character.toString(c)));
        return "must be 1 to 64 characters of A-Z a-z 0-9 _ . -, got '" + shown + "'";
    }

    /** The key of a chunk. */
    public String of(BlockKey chunkKey) {
        return prefix + chunkKey;
    }

    /** The common prefix of this tenant's and namespace's keys (for SCAN patterns and ACLs). */
    public String prefix() {
        return prefix;
    }
}
