package io.kvtier.text;

/**
 * The UTF-8 byte order mark (EF BB BF, U+FEFF) some editors put at the start of a text file: an
 * encoding mark, not text, so the readers of prompt files and traces drop it where a file starts.
 */
public final class ByteOrderMark {

    private ByteOrderMark() {
    }

    /** Bytes of the mark at the start of {@code bytes}: 3, or 0 when they do not start with it. */
    public static int length(byte[] bytes) {
        return bytes.length >= 3 && (bytes[0] & 0xFF) == 0xEF && (bytes[1] & 0xFF) == 0xBB && (bytes[2] & 0xFF) == 0xBF ? 3 : 0;
    }

    /** {@code firstLine} without a leading U+FEFF (the mark decoded), for a reader of characters. */
    public static String strip(String firstLine) {
        return firstLine != null && firstLine.startsWith("\uFEFF") ? firstLine.substring(1) : firstLine;
    }
}
