package io.kvtier.model;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The byte-pair tokenizer of llama2.c ({@code run.c}: {@code build_tokenizer}, {@code encode},
 * {@code decode}), reading its binary format ({@code tok512.bin}, {@code tokenizer.bin}): int32
 * max piece length, then per piece: float32 merge score, int32 byte length, the bytes; all
 * little-endian. Pieces are byte strings; {@code <0xNN>} pieces stand for the raw byte NN and
 * sit at id NN + 3 (after {@code <unk>}, BOS and EOS).
 *
 * <p>Immutable and thread-safe.
 */
public final class Tokenizer implements TextTokenizer {

    /** Beginning-of-sequence id (llama2.c). */
    public static final int BOS = 1;
    /** End-of-sequence id (llama2.c). */
    public static final int EOS = 2;
    /** Id of the piece {@code <0x00>}; byte b is id {@code b + BYTE_OFFSET}. */
    static final int BYTE_OFFSET = 3;

    private final byte[][] pieces;
    private final float[] scores;
    /** Piece bytes (as ISO-8859-1 text, a bijection on bytes) to the lowest id with them. */
    private final Map<String, Integer> ids;
    /** Raw byte value for {@code <0xNN>} pieces, -1 for others. */
    private final int[] byteValue;
    /** Bytes in the longest piece (at least 1). */
    private final int longestPiece;

    private Tokenizer(byte[][] pieces, float[] scores) {
        this.pieces = pieces;
        this.scores = scores;
        this.ids = new HashMap<>(pieces.length * 2);
        this.byteValue = new int[pieces.length];
        for (int i = 0; i < pieces.length; i++) {
            ids.putIfAbsent(key(pieces[i]), i);
            byteValue[i] = parseBytePiece(pieces[i]);
        }
        int longest = 1;
        for (byte[] p : pieces) {
            longest = Math.max(longest, p.length);
        }
        this.longestPiece = longest;
    }

    /**
     * Reads a tokenizer of {@code vocabSize} pieces (the model's vocab_size).
     *
     * @throws ModelFormatException when the file is missing, unreadable, shorter than
     *         {@code vocabSize} pieces, has a negative or oversized piece length, or has bytes
     *         left over after the last piece
     */
    public static Tokenizer load(Path path, int vocabSize) {
        String name = "tokenizer file " + path;
        // The same words as a model file's ("" would resolve to the working directory).
        if (path.toString().isEmpty()) {
            throw new ModelFormatException("tokenizer file: empty path");
        }
        OffHeapFiles.requireNotDirectoryOrEmpty(path, name, "a llama2.c tokenizer file");
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            throw new ModelFormatException(name + ": not found", e);
        } catch (IOException e) {
            throw new ModelFormatException(name + ": cannot be read (" + e + ")", e);
        }
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (in.remaining() < Integer.BYTES) {
            throw new ModelFormatException(name + ": " + bytes.length + " bytes, too short for the header");
        }
        int maxLen = in.getInt();
        if (maxLen <= 0 || maxLen > 1 << 16) {
            throw new ModelFormatException(name + ": max piece length " + maxLen
                    + " is not plausible; not a llama2.c tokenizer");
        }
        byte[][] pieces = new byte[vocabSize][];
        float[] scores = new float[vocabSize];
        for (int i = 0; i < vocabSize; i++) {
            if (in.remaining() < 8) {
                throw new ModelFormatException(name + ": ends after " + i + " pieces but the model's vocabulary has "
                        + vocabSize + " (" + String.format("%,d", bytes.length) + " bytes)");
            }
            scores[i] = in.getFloat();
            int len = in.getInt();
            if (len < 0 || len > maxLen) {
                throw new ModelFormatException(name + ": piece " + i + " has length " + len
                        + ", outside 0.." + maxLen + "; corrupt or not a llama2.c tokenizer");
            }
            if (in.remaining() < len) {
                throw new ModelFormatException(name + ": ends inside piece " + i + " of " + vocabSize);
            }
            pieces[i] = new byte[len];
            in.get(pieces[i]);
        }
        if (in.hasRemaining()) {
            throw new ModelFormatException(name + ": " + in.remaining() + " bytes left after " + vocabSize
                    + " pieces; the tokenizer's vocabulary is larger than the model's");
        }
        return new Tokenizer(pieces, scores);
    }

    @Override
    public int vocabSize() {
        return pieces.length;
    }

    /**
     * A lower bound on {@code encode(text, bos).length} for any text of {@code utf8Bytes} UTF-8
     * bytes, without tokenizing: a token covers at most as many bytes of the text as its piece
     * has (a byte piece covers one), so the text and its dummy-prefix space need at least
     * ceil((bytes + 1) / longest piece) tokens. Lets a caller refuse a prompt that cannot fit a
     * context before paying for its tokenization.
     */
    @Override
    public long minTokens(long utf8Bytes, boolean bos) {
        long text = utf8Bytes == 0 ? 0 : (utf8Bytes + 1 + longestPiece - 1) / longestPiece;
        return text + (bos ? 1 : 0);
    }

    /** {@link #encode(String, boolean)} with BOS when {@code addSpecial}; llama2.c has no special tokens to parse. */
    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        return encode(text, addSpecial);
    }

    @Override
    public int bosId() {
        return BOS;
    }

    /** run.c stops when it samples BOS (id 1). */
    @Override
    public int[] stopTokenIds() {
        return new int[] {BOS};
    }

    /** The bytes of piece {@code id} as stored (a copy). */
    public byte[] piece(int id) {
        return pieces[id].clone();
    }

    public float score(int id) {
        return scores[id];
    }

    /**
     * Encodes {@code text} exactly as llama2.c's {@code encode(t, text, bos, eos=0)}: BOS first when
     * {@code bos}; for non-empty text the piece {@code " "} (SentencePiece's dummy prefix); each
     * UTF-8 code point as its piece, else as byte pieces {@code <0xNN>} (id NN+3); then, while
     * possible, merge the adjacent pair whose concatenation is a piece with the highest score
     * (the leftmost pair on equal scores), in O(n log n) time for n bytes.
     *
     * @throws IllegalArgumentException if {@code text} contains a NUL character (run.c would
     *         silently drop everything after it, as C strings end there)
     */
    public int[] encode(String text, boolean bos) {
        int nul = text.indexOf('\0');
        if (nul >= 0) {
            throw new IllegalArgumentException("the text has a NUL character at character " + nul
                    + " (of " + text.length() + "); it would silently end the prompt");
        }
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        int end = utf8.length;

        int[] tokens = new int[end + 3];
        int n = 0;
        if (bos) tokens[n++] = BOS;
        if (end > 0) {
            Integer dummy = ids.get(" ");
            if (dummy == null) {
                throw new IllegalStateException("tokenizer has no \" \" piece for the dummy prefix");
            }
            tokens[n++] = dummy;
        }
        // One code point at a time: a lead byte plus up to 3 continuation bytes (10xxxxxx).
        int start = 0;
        while (start < end) {
            int len = 1;
            while (start + len < end && (utf8[start + len] & 0xC0) == 0x80 && len < 4) len++;
            Integer id = ids.get(new String(utf8, start, len, StandardCharsets.ISO_8859_1));
            if (id != null) {
                tokens[n++] = id;
            } else {
                for (int i = 0; i < len; i++) tokens[n++] = (utf8[start + i] & 0xFF) + BYTE_OFFSET;
            }
            start += len;
        }
        return Arrays.copyOf(tokens, merge(tokens, n));
    }

    /**
     * llama2.c's greedy BPE merges, in place; returns the new token count. run.c rescans every
     * adjacent pair after each merge (quadratic: a 100 KB prompt took minutes); here every pair
     * that could merge sits in a priority queue by (score descending, position ascending), so
     * the merge chosen is the same (the best score, the leftmost on equal scores) in
     * O(n log n). A queued pair is stale once either side has changed: it is checked when taken.
     * As in run.c, a pair whose merged score is not above -1e10 never merges.
     */
    private int merge(int[] tokens, int n) {
        if (n < 2) {
            return n;
        }
        int[] next = new int[n];
        int[] prev = new int[n];
        for (int i = 0; i < n; i++) {
            next[i] = i + 1 < n ? i + 1 : -1;
            prev[i] = i - 1;
        }
        // A pair is encoded as (left position, the two token ids it was queued with, the merged id).
        java.util.PriorityQueue<Pair> queue = new java.util.PriorityQueue<>(n, Pair.ORDER);
        for (int i = 0; i + 1 < n; i++) {
            offer(queue, tokens, i, i + 1);
        }
        while (!queue.isEmpty()) {
            Pair p = queue.poll();
            int right = next[p.left];
            if (tokens[p.left] != p.leftId || right != p.right || tokens[right] != p.rightId) {
                continue; // a side was merged away or changed since this pair was queued
            }
            tokens[p.left] = p.merged;
            tokens[right] = -1;
            int after = next[right];
            next[p.left] = after;
            if (after >= 0) {
                prev[after] = p.left;
                offer(queue, tokens, p.left, after);
            }
            if (prev[p.left] >= 0) {
                offer(queue, tokens, prev[p.left], p.left);
            }
        }
        int m = 0;
        for (int i = 0; i >= 0; i = next[i]) {
            tokens[m++] = tokens[i];
        }
        return m;
    }

    private void offer(java.util.PriorityQueue<Pair> queue, int[] tokens, int left, int right) {
        Integer id = ids.get(key(pieces[tokens[left]]) + key(pieces[tokens[right]]));
        if (id != null && scores[id] > -1e10f) {
            queue.add(new Pair(scores[id], left, right, tokens[left], tokens[right], id));
        }
    }

    /** A mergeable adjacent pair as it was when queued. */
    private record Pair(float score, int left, int right, int leftId, int rightId, int merged) {
        static final java.util.Comparator<Pair> ORDER = (a, b) -> a.score != b.score
                ? Float.compare(b.score, a.score) : Integer.compare(a.left, b.left);
    }

    /**
     * The bytes llama2.c's {@code decode(t, prevToken, token)} yields: the piece of {@code token},
     * without its leading space when it follows BOS, and the single raw byte NN for a
     * {@code <0xNN>} piece. (run.c's {@code safe_printf} then drops unprintable single bytes;
     * kvtier keeps them so that byte pieces of a multi-byte character survive.)
     */
    @Override
    public byte[] pieceBytes(int prevToken, int token) {
        if (byteValue[token] >= 0) {
            return new byte[] {(byte) byteValue[token]};
        }
        byte[] p = pieces[token];
        if (prevToken == BOS && p.length > 0 && p[0] == ' ') {
            return Arrays.copyOfRange(p, 1, p.length);
        }
        return p.clone();
    }

    /**
     * {@link #pieceBytes} as text. A {@code <0xNN>} piece that is only part of a multi-byte
     * character decodes to U+FFFD here; to stream text, accumulate {@link #pieceBytes} or use
     * {@link #decode(int[])} over the whole sequence.
     */
    public String decodePiece(int prevToken, int token) {
        return new String(pieceBytes(prevToken, token), StandardCharsets.UTF_8);
    }

    /**
     * The text run.c prints for a token sequence: each token's piece given its predecessor
     * ({@link #pieceBytes}), BOS tokens printing nothing, all bytes decoded as UTF-8 once so
     * runs of byte pieces form whole characters. For run.c's output pass
     * {@code prompt_ids + generated_ids} without the final BOS that ends generation (run.c stops
     * before printing it; here it would print nothing anyway).
     */
    @Override
    public String decode(int[] ids) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int prev = -1;
        for (int id : ids) {
            if (id != BOS) {
                out.writeBytes(pieceBytes(prev, id));
            }
            prev = id;
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String key(byte[] piece) {
        return new String(piece, StandardCharsets.ISO_8859_1);
    }

    /** NN for a piece spelled exactly {@code <0xNN>} (hex digits), else -1. */
    private static int parseBytePiece(byte[] p) {
        if (p.length != 6 || p[0] != '<' || p[1] != '0' || p[2] != 'x' || p[5] != '>') {
            return -1;
        }
        int hi = Character.digit(p[3], 16);
        int lo = Character.digit(p[4], 16);
        return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
    }
}
