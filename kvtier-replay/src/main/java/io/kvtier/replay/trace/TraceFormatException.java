package io.kvtier.replay.trace;

import java.io.IOException;

/**
 * A line of a trace file that is not a valid Mooncake request. The message reads
 * {@code FILE:LINE: field 'FIELD': what is wrong}, so it can be shown to a user as it is.
 */
public final class TraceFormatException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String source;
    private final long line;
    private final String field;

    /**
     * @param source name of the file (or other source) being read
     * @param line   1-based line number
     * @param field  JSON field at fault, or {@code "(json)"} for a syntax error and
     *               {@code "(line)"} for a problem with the line as a whole
     * @param detail what is wrong
     * @param cause  underlying parser error, or null
     */
    public TraceFormatException(String source, long line, String field, String detail, Throwable cause) {
        super(source + ":" + line + ": field '" + field + "': " + detail, cause);
        this.source = source;
        this.line = line;
        this.field = field;
    }

    /** Name of the file being read. */
    public String source() {
        return source;
    }

    /** 1-based line number of the bad line. */
    public long line() {
        return line;
    }

    /** The field at fault ({@code "(json)"} for a syntax error, {@code "(line)"} for the whole line). */
    public String field() {
        return field;
    }
}
