package io.kvtier.model;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * run.c's {@code encode} written the way run.c writes it (rescan every pair after each merge:
 * quadratic), through the tokenizer's public pieces and scores only: the oracle that
 * {@link Tokenizer#encode}'s priority-queue merge is compared with.
 */
final class QuadraticBpeReference {

    private final Tokenizer tok;
    private final Map<String, Integer> ids = new HashMap<>();

    QuadraticBpeReference(Tokenizer tok) {
        this.tok = tok;
        for (int i = 0; i < tok.vocabSize(); i++) {
            ids.putIfAbsent(text(tok.piece(i)), i);
        }
    }

    private static String text(byte[] piece) {
        return new String(piece, StandardCharsets.ISO_8859_1);
    }

    int[] encode(String s, boolean bos) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        List<Integer> t = new ArrayList<>();
        if (bos) t.add(Tokenizer.BOS);
        if (utf8.length > 0) t.add(ids.get(" "));
        for (int start = 0; start < utf8.length; ) {
            int len = 1;
            while (start + len < utf8.length && (utf8[start + len] & 0xC0) == 0x80 && len < 4) len++;
            Integer id = ids.get(new String(utf8, start, len, StandardCharsets.ISO_8859_1));
            if (id != null) {
                t.add(id);
            } else {
                for (int i = 0; i < len; i++) t.add((utf8[start + i] & 0xFF) + Tokenizer.BYTE_OFFSET);
            }
            start += len;
        }
        while (true) {
            float best = -1e10f;
            int bestId = -1, bestIdx = -1;
            for (int i = 0; i + 1 < t.size(); i++) {
                Integer id = ids.get(text(tok.piece(t.get(i))) + text(tok.piece(t.get(i + 1))));
                if (id != null && tok.score(id) > best) {
                    best = tok.score(id);
                    bestId = id;
                    bestIdx = i;
                }
            }
            if (bestIdx < 0) break;
            t.set(bestIdx, bestId);
            t.remove(bestIdx + 1);
        }
        return t.stream().mapToInt(Integer::intValue).toArray();
    }
}
