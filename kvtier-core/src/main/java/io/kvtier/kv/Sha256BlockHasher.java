package io.kvtier.kv;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SHA-256 over (parent key, token count, token ids as little-endian int32, extra-key bytes).
 * The token count and the length prefix of the extra keys keep the encoding unambiguous.
 */
final class Sha256BlockHasher implements BlockHasher {

    private final BlockKey seed;
    private final MessageDigest sha;
    private ByteBuffer scratch = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);

    Sha256BlockHasher(Namespace namespace) {
        this.seed = namespace.digest();
        try {
            this.sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    @Override
    public BlockKey namespaceSeed() {
        return seed;
    }

    @Override
    public BlockKey hash(BlockKey parent, int[] tokens, int from, int to, ExtraKeys extra) {
        byte[] extraBytes = extra.bytes();
        int need = BlockKey.BYTES + 4 + 4 * (to - from) + 4 + extraBytes.length;
        if (scratch.capacity() < need) {
            scratch = ByteBuffer.allocate(Math.max(need, 2 * scratch.capacity())).order(ByteOrder.LITTLE_ENDIAN);
        }
        ByteBuffer b = scratch.clear();
        parent.writeTo(b.order(ByteOrder.BIG_ENDIAN));
        b.order(ByteOrder.LITTLE_ENDIAN).putInt(to - from);
        for (int i = from; i < to; i++) {
            b.putInt(tokens[i]);
        }
        b.putInt(extraBytes.length).put(extraBytes);
        sha.update(b.array(), 0, b.position());
        return BlockKey.of(sha.digest());
    }
}
