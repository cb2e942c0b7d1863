package io.kvtier.cli;

import io.kvtier.model.TextTokenizer;
import java.util.function.Function;
import java.util.function.IntFunction;
import io.kvtier.text.ByteOrderMark;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Prompts read from a file or standard input, one a line ({@code \n}, {@code \r\n} or {@code \r}
 * ends a line). Refuses, with one line naming the file, the line and the column, what would
 * otherwise change a prompt silently: bytes that are not UTF-8 and NUL characters (which end a
 * C string: the prompt would be cut there). A UTF-8 byte order mark at the start of the file is
 * an encoding mark, not text, and is dropped.
 */
final class PromptSource {

    /** Most bytes a prompt line may have: far past any model's context, short of what fills memory. */
    static final int MAX_LINE_BYTES = 64 << 20;
    /** Most prompts one file may hold (each becomes a request held until it ends); more is a job for {@code serve}. */
    static final int MAX_PROMPTS = 1_000_000;

    private PromptSource() {
    }

    /**
     * The prompts of {@code file} ({@code -}: standard input), flag {@code flag} for messages, read
     * a line at a time ({@link #parse}): a NUL or a byte that is not UTF-8 stops the read where it
     * is, so a wrong file (a gigabyte of zeros, a disk image) is refused at its first bad byte, not
     * after it has been read whole (which took 79 s and 6.5 GB for 1 GB of zeros).
     */
    static List<String> read(Path file, String flag) throws IOException {
        boolean stdin = file.toString().equals("-");
        try (InputStream in = stdin ? System.in : Files.newInputStream(Checks.inputFile(file, flag))) {
            return parse(in, where(file, flag));
        }
    }

    /** How messages name the prompt source: "--prompts FILE", or "--prompts (standard input)" for {@code -}. */
    static String where(Path file, String flag) {
        return flag + " " + (file.toString().equals("-") ? "(standard input)" : file.toString());
    }

    /**
     * Refuses a command-line prompt that was not UTF-8: the JVM decodes its arguments before kvtier
     * sees them and puts U+FFFD where a byte was not UTF-8, so the replacement character is the
     * only trace left (a prompt file's bytes are checked themselves, by {@link #parse}).
     */
    static void checkArgument(String prompt, String flag) {
        checkArgument(prompt, flag, "; give such text in a --prompts file, whose bytes kvtier checks itself");
    }

    /** {@link #checkArgument(String, String)} for any flag's text, {@code advice} ending the line. */
    static void checkArgument(String text, String flag, String advice) {
        int bad = text.indexOf('\uFFFD');
        if (bad >= 0) {
            throw new BadInputException(flag + ": the text is not valid UTF-8 (the JVM replaced bytes at character "
                    + (bad + 1) + " with U+FFFD)" + advice);
        }
    }

    /**
     * The prompts in {@code in}, one a line ({@code \n}, {@code \r\n} or {@code \r}; a last line
     * without an end counts, an empty file has none), without a byte order mark at the start;
     * {@code where} (e.g. "--prompts x.txt") starts every error. Stops at the first NUL byte or the
     * first line that is not UTF-8 (UTF-8 never uses the bytes of NUL, CR or LF inside a
     * character, so lines are cut as bytes and decoded one by one).
     *
     * @throws BadInputException naming the line and the column (NUL) or the byte (not UTF-8), a line
     *         past {@link #MAX_LINE_BYTES} or a prompt past {@link #MAX_PROMPTS}, as soon as it is read
     */
    static List<String> parse(InputStream in, String where) throws IOException {
        List<String> lines = new ArrayList<>();
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        CharsetDecoder dec = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        byte[] buf = new byte[1 << 16];
        boolean afterCr = false;
        for (int n; (n = in.read(buf)) > 0; ) {
            for (int i = 0; i < n; i++) {
                byte b = buf[i];
                if (b == '\n' && afterCr) {   // the LF of a CR LF: the CR ended the line
                    afterCr = false;
                } else if (b == '\n' || b == '\r') {
                    add(lines, decode(dec, line, lines.size(), where), where);
                    line.reset();
                    afterCr = b == '\r';
                } else if (b == 0) {
                    String before = decode(dec, line, lines.size(), where);
                    throw new BadInputException(where + ": line " + (lines.size() + 1) + " has a NUL character at column "
                            + (before.length() + 1) + "; it would silently end the prompt");
                } else if (line.size() == MAX_LINE_BYTES) {
                    throw new BadInputException(where + ": line " + (lines.size() + 1) + " is longer than "
                            + (MAX_LINE_BYTES >> 20) + " MiB, more than any prompt can be; is it the right file?");
                } else {
                    line.write(b);
                    afterCr = false;
                }
            }
        }
        if (line.size() > 0) {
            String last = decode(dec, line, lines.size(), where);
            if (!lines.isEmpty() || !last.isEmpty()) {   // a byte order mark alone is no line
                add(lines, last, where);
            }
        }
        return lines;
    }

    /** Adds a prompt, refusing the one past {@link #MAX_PROMPTS} (an endless pipe would otherwise fill memory). */
    private static void add(List<String> lines, String prompt, String where) {
        if (lines.size() == MAX_PROMPTS) {
            throw new BadInputException(String.format("%s: more than %,d prompts (one a line); split the file, or send"
                    + " them to kvtier serve", where, MAX_PROMPTS));
        }
        lines.add(prompt);
    }

    /** The text of line {@code index} (0-based; the first without its byte order mark), or the line naming its first byte that is not UTF-8. */
    private static String decode(CharsetDecoder dec, ByteArrayOutputStream line, int index, String where) {
        byte[] bytes = line.toByteArray();
        int start = index == 0 ? ByteOrderMark.length(bytes) : 0;
        dec.reset();
        ByteBuffer in = ByteBuffer.wrap(bytes, start, bytes.length - start);
        CharBuffer out = CharBuffer.allocate(bytes.length - start);
        CoderResult r = dec.decode(in, out, true);
        if (!r.isError()) {
            r = dec.flush(out);
        }
        if (r.isError()) {
            int bad = in.position();
            throw new BadInputException(String.format("%s: line %d is not valid UTF-8 (byte 0x%02X at byte %d of the line)",
                    where, index + 1, bytes[bad] & 0xFF, bad - start + 1));
        }
        return out.flip().toString();
    }

    /**
     * Token ids of every prompt, each through {@code encoder} (BOS first, or a chat template). A
     * prompt whose UTF-8 length alone proves it cannot fit {@code contextTokens}
     * ({@link TextTokenizer#minTokens}) is refused before anything is tokenized.
     *
     * @param source   where prompt i (0-based) came from, for the line that refuses it as too long
     *                  ("--prompt", "--prompts line 3")
     * @throws BadInputException naming the prompt (1-based) that is too long, holds a NUL, or has no
     *                           token (empty, on a model without BOS)
     */
    static List<int[]> encode(List<String> prompts, TextTokenizer tok, int contextTokens, Function<String, int[]> encoder,
                              IntFunction<String> source) {
        for (int i = 0; i < prompts.size(); i++) {
            long bytes = prompts.get(i).getBytes(StandardCharsets.UTF_8).length;
            long least = tok.minTokens(bytes, true);
            if (least > contextTokens) {
                throw new BadInputException(beyondContext(i, bytes + " bytes, at least " + least + " tokens", contextTokens,
                        source.apply(i)));
            }
        }
        List<int[]> ids = new java.util.ArrayList<>(prompts.size());
        for (int i = 0; i < prompts.size(); i++) {
            int[] p;
            try {
                p = encoder.apply(prompts.get(i));
            } catch (IllegalArgumentException e) {
                throw new BadInputException("prompt " + (i + 1) + ": " + e.getMessage(), e);
            }
            if (p.length == 0) {
                // Only a model without BOS (qwen2, qwen3, llama3-style files) gets here: elsewhere an empty prompt is BOS alone.
                String from = source.apply(i);
                throw new BadInputException("prompt " + (i + 1) + " is empty and this model adds no BOS token, so it has no"
                        + " token to start from: " + (from.startsWith("--prompts") ? "give " + from + " some text, or remove the line"
                        : "give some text (--prompt TEXT)"));
            }
            if (p.length > contextTokens) {
                throw new BadInputException(beyondContext(i, p.length + " tokens", contextTokens, source.apply(i)));
            }
            ids.add(p);
        }
        return ids;
    }

    /** "prompt 2 has 600 tokens, more than the model's context of 512 tokens; shorten it (--prompts line 1)" */
    private static String beyondContext(int index, String size, int contextTokens, String source) {
        return "prompt " + (index + 1) + " has " + size + ", more than the model's context of "
                + io.kvtier.text.Plural.count(contextTokens, "token") + "; shorten it (" + source + ")";
    }

    /**
     * The line for prompt {@code index} (0-based) that the device pool cannot hold with its
     * {@code --max-tokens}: the engine's figures, the flags that change them, and values that fit.
     */
    static String beyondPool(int index, io.kvtier.engine.RequestDoesNotFitException e) {
        long fit = e.newTokensThatFit();
        return "prompt " + (index + 1) + ": " + e.poolShortfall("--max-tokens", "--device-blocks") + "; give "
                + (fit >= 1 ? "--max-tokens " + fit + " or less, or " : "") + "--device-blocks " + e.blocks() + " or more";
    }
}
