package io.kvtier.replay.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import io.kvtier.text.ByteOrderMark;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads Mooncake traces: UTF-8 JSON lines, one request per line, as released with Mooncake
 * (FAST'25), e.g. {@code {"timestamp": 0, "input_length": 6758, "output_length": 500,
 * "hash_ids": [0, 1, 2]}}.
 *
 * <ul>
 *   <li>{@code timestamp}: arrival in milliseconds, integer {@code >= 0}, never below the line before's;</li>
 *   <li>{@code input_length}: prompt tokens, integer {@code >= 1};</li>
 *   <li>{@code output_length}: answer tokens, integer {@code >= 0};</li>
 *   <li>{@code hash_ids}: array of integer ids {@code >= 0}, one per 512-token prompt block, so
 *       exactly {@code ceil(input_length / 512)} of them (the last block may be partial).</li>
 * </ul>
 *
 * All four fields are required; other fields are ignored (later Mooncake releases add some);
 * a field given twice, content after the object, or any other departure is an error.
 * Blank lines are skipped but counted, so line numbers match an editor's; a UTF-8 byte order mark
 * starting the file is dropped.
 *
 * <p>The count rule is strict because the shipped traces obey it without exception (checked:
 * all 12,031 conversation and 3,993 synthetic requests have exactly ceil(input_length / 512)
 * ids), so a line that does not is damaged, not a variant of the format.
 *
 * <p>Speed: Jackson's streaming parser, one small parser per line; the 3 MB conversation trace
 * reads in well under a second.
 */
public final class TraceReader {

    private static final JsonFactory JSON = new JsonFactory();

    private TraceReader() {
    }

    /**
     * Reads a whole trace file.
     *
     * @throws TraceFormatException naming the file, line and field of the first bad line
     * @throws IOException          when the file cannot be read
     */
    public static Trace read(Path file) throws IOException {
        return read(file, r -> null);
    }

    /**
     * Reads a whole trace file, each request also checked by {@code check} (a rule of the caller's,
     * e.g. the replay's longest context), whose fault is reported as the format's are.
     *
     * @throws TraceFormatException naming the file, line and field of the first bad line
     * @throws IOException          when the file cannot be read
     */
    public static Trace read(Path file, RequestCheck check) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return read(in, file.toString(), check);
        }
    }

    /** A caller's rule for each request of a trace beyond the format's. */
    @FunctionalInterface
    public interface RequestCheck {
        /** The field of {@code r}'s line at fault and what is wrong, or null when {@code r} is fine. */
        Fault check(TraceRequest r);
    }

    /** What a {@link RequestCheck} found: the field at fault and what is wrong with it. */
    public record Fault(String field, String detail) {
    }

    /**
     * The next line; bytes that are not UTF-8 fail naming the file and the line the reader had reached
     * (the decoder reads ahead by a buffer, so the bad bytes are on that line or a later one).
     */
    private static String readLine(BufferedReader lines, String source, long lineNo) throws IOException {
        try {
            return lines.readLine();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new TraceFormatException(source, lineNo, "(line)", "is not valid UTF-8 text (on this line or a later one)", e);
        }
    }

    /**
     * Reads a trace from {@code in} (not closed); {@code source} names it in error messages.
     *
     * @throws TraceFormatException naming the source, line and field of the first bad line
     */
    public static Trace read(Reader in, String source) throws IOException {
        return read(in, source, r -> null);
    }

    private static Trace read(Reader in, String source, RequestCheck check) throws IOException {
        BufferedReader lines = in instanceof BufferedReader b ? b : new BufferedReader(in);
        List<TraceRequest> out = new ArrayList<>();
        IntList ids = new IntList();
        long lineNo = 0;
        // A leading byte order mark is an encoding mark, not JSON (as generate --prompts drops it).
        for (String line = ByteOrderMark.strip(readLine(lines, source, lineNo + 1)); line != null;
                line = readLine(lines, source, lineNo + 1)) {
            lineNo++;
            if (line.isBlank()) {
                continue;
            }
            TraceRequest r = parseLine(line, source, lineNo, ids);
            if (!out.isEmpty() && r.timestampMs() < out.getLast().timestampMs()) {
                // Replays feed requests in file order as arrival order: an earlier timestamp later in
                // the file would arrive "in the past" and skew every latency after it.
                throw new TraceFormatException(source, lineNo, "timestamp", r.timestampMs() + " is before the previous request's "
                        + out.getLast().timestampMs() + ": a trace must be sorted by arrival time", null);
            }
            Fault fault = check.check(r);
            if (fault != null) {
                throw new TraceFormatException(source, lineNo, fault.field(), fault.detail(), null);
            }
            out.add(r);
        }
        return new Trace(source, out);
    }

    /**
     * Parses one line (without its line terminator).
     *
     * @throws TraceFormatException naming {@code source}, {@code lineNo} and the field at fault
     */
    public static TraceRequest parseLine(String line, String source, long lineNo) throws TraceFormatException {
        return parseLine(line, source, lineNo, new IntList());
    }

    private static TraceRequest parseLine(String line, String source, long lineNo, IntList ids)
            throws TraceFormatException {
        long timestamp = -1;
        long input = -1;
        long output = -1;
        boolean haveIds = false;
        ids.clear();
        String field = "(json)";
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new TraceFormatException(source, lineNo, "(line)", "expected a JSON object", null);
            }
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                field = "(json)";
                String name = p.currentName();
                field = name;
                JsonToken value = p.nextToken();
                switch (name) {
                    case "timestamp" -> {
                        checkOnce(timestamp >= 0, source, lineNo, name);
                        timestamp = nonNegative(p, value, source, lineNo, name, 0);
                    }
                    case "input_length" -> {
                        checkOnce(input >= 0, source, lineNo, name);
                        input = nonNegative(p, value, source, lineNo, name, 1);
                    }
                    case "output_length" -> {
                        checkOnce(output >= 0, source, lineNo, name);
                        output = nonNegative(p, value, source, lineNo, name, 0);
                    }
                    case "hash_ids" -> {
                        checkOnce(haveIds, source, lineNo, name);
                        readIds(p, value, source, lineNo, ids);
                        haveIds = true;
                    }
                    default -> p.skipChildren();
                }
                field = "(json)";
            }
            if (p.nextToken() != null) {
                throw new TraceFormatException(source, lineNo, "(line)", "content after the JSON object", null);
            }
        } catch (TraceFormatException e) {
            throw e; // already names the field; it is an IOException, keep it from the catch below
        } catch (InputCoercionException e) {
            throw new TraceFormatException(source, lineNo, field, "number out of range: " + e.getOriginalMessage(), e);
        } catch (JsonProcessingException e) {
            // Jackson's message may embed its own source description; the line and column say enough.
            String what = e.getOriginalMessage().replaceAll(" ?\\(start marker at \\[Source: [^\\]]*\\]\\)", "");
            throw new TraceFormatException(source, lineNo, field, "malformed JSON: " + what
                    + " at column " + e.getLocation().getColumnNr(), e);
        } catch (IOException e) {
            throw new TraceFormatException(source, lineNo, field, "unreadable: " + e.getMessage(), e);
        }
        requireField(timestamp >= 0, source, lineNo, "timestamp");
        requireField(input >= 0, source, lineNo, "input_length");
        requireField(output >= 0, source, lineNo, "output_length");
        requireField(haveIds, source, lineNo, "hash_ids");
        if (input > Integer.MAX_VALUE || output > Integer.MAX_VALUE) {
            String f = input > Integer.MAX_VALUE ? "input_length" : "output_length";
            throw new TraceFormatException(source, lineNo, f, "exceeds " + Integer.MAX_VALUE + " tokens", null);
        }
        int expected = TraceRequest.blocksFor((int) input);
        if (ids.size != expected) {
            throw new TraceFormatException(source, lineNo, "hash_ids", "input_length " + input + " needs ceil("
                    + input + "/" + TraceRequest.BLOCK_TOKENS + ") = " + expected + " ids, got " + ids.size, null);
        }
        return new TraceRequest(timestamp, (int) input, (int) output, ids.toArray());
    }

    private static long nonNegative(JsonParser p, JsonToken value, String source, long lineNo, String name, long min)
            throws IOException {
        if (value != JsonToken.VALUE_NUMBER_INT) {
            throw new TraceFormatException(source, lineNo, name,
                    "expected an integer, got " + describe(p, value), null);
        }
        long v = p.getLongValue();
        if (v < min) {
            throw new TraceFormatException(source, lineNo, name, "must be >= " + min + ", got " + v, null);
        }
        return v;
    }

    private static void readIds(JsonParser p, JsonToken value, String source, long lineNo, IntList ids)
            throws IOException {
        if (value != JsonToken.START_ARRAY) {
            throw new TraceFormatException(source, lineNo, "hash_ids", "expected an array, got " + describe(p, value), null);
        }
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            if (t != JsonToken.VALUE_NUMBER_INT) {
                throw new TraceFormatException(source, lineNo, "hash_ids", "element " + ids.size
                        + ": expected an integer, got " + describe(p, t), null);
            }
            int id = p.getIntValue();
            if (id < 0) {
                throw new TraceFormatException(source, lineNo, "hash_ids", "element " + ids.size
                        + ": must be >= 0, got " + id, null);
            }
            ids.add(id);
        }
    }

    private static String describe(JsonParser p, JsonToken t) throws IOException {
        return switch (t) {
            case VALUE_STRING -> "string \"" + p.getText() + "\"";
            case VALUE_NUMBER_FLOAT -> "non-integer number " + p.getText();
            case VALUE_NULL -> "null";
            case VALUE_TRUE, VALUE_FALSE -> "boolean " + p.getText();
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            default -> String.valueOf(t);
        };
    }

    private static void checkOnce(boolean seen, String source, long lineNo, String name) throws TraceFormatException {
        if (seen) {
            throw new TraceFormatException(source, lineNo, name, "given more than once", null);
        }
    }

    private static void requireField(boolean present, String source, long lineNo, String name)
            throws TraceFormatException {
        if (!present) {
            throw new TraceFormatException(source, lineNo, name, "missing", null);
        }
    }

    /** Growable int array reused across lines, so parsing allocates one exact array per request. */
    private static final class IntList {
        int[] a = new int[64];
        int size;

        void clear() {
            size = 0;
        }

        void add(int v) {
            if (size == a.length) {
                a = Arrays.copyOf(a, 2 * a.length);
            }
            a[size++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(a, size);
        }
    }
}
