package io.kvtier.server;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Turns generated token ids into text deltas as they arrive: bytes of byte-level pieces are held
 * until they form whole UTF-8 characters, and text that could be the start of a stop string is
 * held until it is known not to be one. When a stop string appears (also across token
 * boundaries) the text before it is the last delta and {@link #stopped()} turns true; the stop
 * string itself never leaves. Not thread-safe: one per request.
 */
final class TextStreamer {

    private final ModelText model;
    private final List<String> stops;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final StringBuilder pending = new StringBuilder();
    private final StringBuilder all = new StringBuilder();
    private int prevToken;
    private int tokensUsed;
    private boolean stopped;

    /** @param lastPromptToken the prompt's last id (a piece after BOS drops its leading space) */
    TextStreamer(ModelText model, List<String> stops, int lastPromptToken) {
        this.model = model;
        this.stops = stops;
        this.prevToken = lastPromptToken;
    }

    /**
     * Feeds new tokens; returns the text that may be sent now (possibly empty). After a stop
     * string, further tokens are ignored.
     */
    String accept(int[] ids) {
        StringBuilder out = new StringBuilder();
        for (int id : ids) {
            if (stopped) {
                break;
            }
            tokensUsed++;
            bytes.writeBytes(model.pieceBytes(prevToken, id));
            prevToken = id;
            pending.append(takeCompleteUtf8());
            out.append(release(false));
        }
        all.append(out);
        return out.toString();
    }

    /** At the end of generation: everything still held (incomplete bytes decode as U+FFFD). */
    String finish() {
        if (stopped) {
            return "";
        }
        pending.append(bytes.toString(StandardCharsets.UTF_8));
        bytes.reset();
        String out = release(true);
        all.append(out);
        return out;
    }

    /** True once a stop string was seen. */
    boolean stopped() {
        return stopped;
    }

    /** Tokens consumed up to and including the one that completed a stop string (usage's completion tokens). */
    int tokensUsed() {
        return tokensUsed;
    }

    /** All text released so far. */
    String text() {
        return all.toString();
    }

    private String release(boolean end) {
        int cut = -1;
        for (String s : stops) {
            int i = pending.indexOf(s);
            if (i >= 0 && (cut < 0 || i < cut)) {
                cut = i;
            }
        }
        if (cut >= 0) {
            stopped = true;
            String out = pending.substring(0, cut);
            pending.setLength(0);
            return out;
        }
        int keep = end ? 0 : heldSuffix();
        String out = pending.substring(0, pending.length() - keep);
        pending.delete(0, pending.length() - keep);
        return out;
    }

    /** Length of the longest suffix of {@code pending} that is a proper prefix of a stop string. */
    private int heldSuffix() {
        int best = 0;
        String p = pending.toString();
        for (String s : stops) {
            for (int len = Math.min(s.length() - 1, p.length()); len > best; len--) {
                if (p.regionMatches(p.length() - len, s, 0, len)) {
                    best = len;
                    break;
                }
            }
        }
        return best;
    }

    /** Decodes the longest prefix of the held bytes that ends on a whole UTF-8 character. */
    private String takeCompleteUtf8() {
        byte[] b = bytes.toByteArray();
        int end = b.length;
        // Walk back over at most 3 continuation bytes to the last lead byte; keep it if its sequence is short.
        int i = end - 1;
        int back = 0;
        while (i >= 0 && back < 3 && (b[i] & 0xC0) == 0x80) {
            i--;
            back++;
        }
        if (i >= 0) {
            int lead = b[i] & 0xFF;
            int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (need > end - i) {
                end = i;
            }
        }
        bytes.reset();
        bytes.write(b, end, b.length - end);
        return new String(b, 0, end, StandardCharsets.UTF_8);
    }
}
