package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.KvGroup;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;

/**
 * A request as one KV group's offloading part sees it: the same tokens, and block keys qualified
 * with the group ({@link KvGroup#key}, the keys {@link io.kvtier.kv.KvCacheManager#cacheKey} gives
 * the group's device blocks), so the group's chunks are stored, found and loaded under keys no
 * other group (or group layout) shares. Each key is computed once, when first asked for.
 */
final class GroupView implements SequenceView {

    private final SequenceView request;
    private final KvGroup group;
    private final List<BlockKey> keys = new ArrayList<>();
    private final List<BlockKey> view = new AbstractList<>() {
        @Override
        public BlockKey get(int i) {
            extend();
            return keys.get(i);
        }

        @Override
        public int size() {
            return request.blockKeys().size();
        }
    };

    GroupView(SequenceView request, KvGroup group) {
        this.request = request;
        this.group = group;
    }

    /** One group's views of the requests it sees, by request id (a request id reused by another request gets a new view). */
    static final class Views {
        private final KvGroup group;
        private final java.util.HashMap<Long, GroupView> byId = new java.util.HashMap<>();

        Views(KvGroup group) {
            this.group = group;
        }

        SequenceView of(SequenceView r) {
            GroupView v = byId.get(r.id());
            if (v == null || v.request != r) {
                v = new GroupView(r, group);
                byId.put(r.id(), v);
            }
            return v;
        }

        void forget(long requestId) {
            byId.remove(requestId);
        }
    }

    private void extend() {
        List<BlockKey> chain = request.blockKeys();
        while (keys.size() < chain.size()) {
            keys.add(group.key(chain.get(keys.size())));
        }
    }

    @Override
    public long id() {
        return request.id();
    }

    @Override
    public int promptLength() {
        return request.promptLength();
    }

    @Override
    public int numTokens() {
        return request.numTokens();
    }

    @Override
    public int[] tokens(int from, int to) {
        return request.tokens(from, to);
    }

    @Override
    public List<BlockKey> blockKeys() {
        return view;
    }
}
