package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link PromptSource#parse}: lines as {@link String#lines()} cuts them, read a line at a time, stopped at the first bad byte. */
class PromptSourceTest {

    @TempDir
    Path dir;

    private static List<String> parse(byte[] bytes) throws IOException {
        return PromptSource.parse(new ByteArrayInputStream(bytes), "--prompts t.txt");
    }

    @ParameterizedTest(name = "{index}: {0}")
    @ValueSource(strings = {"", "\n", "a", "a\n", "a\nb", "a\r\nb\r\n", "a\rb\r", "a\r\r\nb", "\n\n", "a\n\nb\n",
            "\r\n", "\u00e9t\u00e9\nna\u00efve \u4e16\u754c\n"})
    void linesAreStringLinesOfTheText(String text) throws IOException {
        assertThat(parse(text.getBytes(StandardCharsets.UTF_8))).isEqualTo(text.lines().toList());
    }

    /** A CR LF cut by the reader's 64 KiB buffer is still one line end. */
    @Test
    void aCrLfAcrossTheReadBufferIsOneLineEnd() throws IOException {
        String first = "x".repeat((1 << 16) - 1);
        String text = first + "\r\nsecond\r\n";
        assertThat(parse(text.getBytes(StandardCharsets.UTF_8))).containsExactly(first, "second");
    }

    @Test
    void aByteOrderMarkIsDroppedFromTheFirstLineOnly() throws IOException {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        assertThat(parse(bom)).isEmpty();
        assertThat(parse(concat(bom, "\n".getBytes(StandardCharsets.UTF_8)))).containsExactly("");
        assertThat(parse(concat(bom, "a\n".getBytes(StandardCharsets.UTF_8), bom, "b".getBytes(StandardCharsets.UTF_8))))
                .containsExactly("a", "\uFEFFb");
        assertThatThrownBy(() -> parse(concat(bom, "ab\0".getBytes(StandardCharsets.UTF_8))))
                .hasMessage("--prompts t.txt: line 1 has a NUL character at column 3; it would silently end the prompt");
    }

    @Test
    void theFirstBadByteInTheFileIsNamedWithItsLineAndColumn() {
        assertThatThrownBy(() -> parse("ok\n\u00e9\u00e9\0 then \u00ff".getBytes(StandardCharsets.UTF_8)))
                .hasMessage("--prompts t.txt: line 2 has a NUL character at column 3; it would silently end the prompt");
        byte[] bad = "ok\r\nab\u00e9".getBytes(StandardCharsets.UTF_8);
        bad[bad.length - 1] = (byte) 0x41;   // é's lead byte followed by 'A'
        assertThatThrownBy(() -> parse(concat(bad, new byte[] {0})))
                .hasMessage("--prompts t.txt: line 2 is not valid UTF-8 (byte 0xC3 at byte 3 of the line)");
    }

    /**
     * A gigabyte of zeros (a sparse file, nothing on disk) is refused at its first byte: it was
     * read whole first, 79 s and 6.5 GB of memory, and a larger one ended in "not enough memory".
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aFileOfZerosIsRefusedAtItsFirstByte() throws IOException {
        Path zeros = sparseZeros(dir.resolve("zeros.txt"), 1L << 30);
        assertThatThrownBy(() -> PromptSource.read(zeros, "--prompts"))
                .isInstanceOf(BadInputException.class)
                .hasMessage("--prompts " + zeros + ": line 1 has a NUL character at column 1; it would silently end the prompt");
    }

    /**
     * Text without end (a pipe from {@code yes}, a file of one endless line) is refused once a line
     * passes 64 MiB or the prompts pass a million: it was buffered until memory ran out (1.5 GB of
     * one line: 85 s, 6 GB, then "not enough memory").
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void endlessTextIsRefusedAtTheLineOrPromptCap() {
        assertThatThrownBy(() -> PromptSource.parse(endless("a"), "--prompts (standard input)"))
                .hasMessage("--prompts (standard input): line 1 is longer than 64 MiB, more than any prompt can be;"
                        + " is it the right file?");
        assertThatThrownBy(() -> PromptSource.parse(endless("Once upon a time\n"), "--prompts (standard input)"))
                .hasMessage("--prompts (standard input): more than 1,000,000 prompts (one a line); split the file, or send"
                        + " them to kvtier serve");
    }

    /** A file of {@code bytes} zeros that takes no disk (sparse): a wrong file as large as a disk image, made at once. */
    static Path sparseZeros(Path file, long bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(bytes);
        }
        return file;
    }

    /** An input stream that repeats {@code text} for ever. */
    private static java.io.InputStream endless(String text) {
        byte[] unit = text.getBytes(StandardCharsets.UTF_8);
        return new java.io.InputStream() {
            private long at;

            @Override
            public int read() {
                return unit[(int) (at++ % unit.length)];
            }

            @Override
            public int read(byte[] b, int off, int len) {
                for (int i = 0; i < len; i++) {
                    b[off + i] = unit[(int) (at++ % unit.length)];
                }
                return len;
            }
        };
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }
}
