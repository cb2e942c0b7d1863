package io.kvtier.model.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * GPT-2's reversible byte-to-character map used by byte-level BPE vocabularies: printable
 * bytes ({@code !}..{@code ~}, {@code ¡}..{@code ¬}, {@code ®}..{@code ÿ}) stand for themselves,
 * the other 68 bytes for U+0100 onwards in byte order (so a space is {@code Ġ} U+0120 and a
 * newline {@code Ċ} U+010A).
 */
final class ByteAlphabet {

    private static final char[] TO_CHAR = new char[256];
    /** Char (all below U+0200) to byte, -1 where none. */
    private static final int[] TO_BYTE = new int[0x200];

    static {
        java.util.Arrays.fill(TO_BYTE, -1);
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            TO_CHAR[b] = (char) (printable ? b : next++);
            TO_BYTE[TO_CHAR[b]] = b;
        }
    }

    private ByteAlphabet() {
    }

    /** The UTF-8 bytes of {@code text}, each written as its alphabet character. */
    static String encode(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        char[] out = new char[utf8.length];
        for (int i = 0; i < utf8.length; i++) {
            out[i] = TO_CHAR[utf8[i] & 0xFF];
        }
        return new String(out);
    }

    /**
     * The bytes a token text in this alphabet stands for. A character outside the alphabet
     * (a malformed vocabulary) is kept as its own UTF-8, as llama.cpp keeps unknown bytes visible.
     */
    static void decode(String token, ByteArrayOutputStream out) {
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            int b = c < TO_BYTE.length ? TO_BYTE[c] : -1;
            if (b >= 0) {
                out.write(b);
            } else {
                int cp = token.codePointAt(i);
                out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
                i += Character.charCount(cp) - 1;
            }
        }
    }
}
