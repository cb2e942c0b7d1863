package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import java.util.List;

/** What the offload scheduler reads of a request: ids, tokens and chained block keys. */
public interface SequenceView {

    long id();

    /** Prompt length in tokens. */
    int promptLength();

    /** Known tokens (prompt plus generated). */
    int numTokens();

    /** Token ids at positions [from, to). */
    int[] tokens(int from, int to);

    /** Key of every full block of known tokens, head first. */
    List<BlockKey> blockKeys();
}
