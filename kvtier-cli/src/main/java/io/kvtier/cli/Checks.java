package io.kvtier.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;

/** Flag checks that fail with one line naming the flag ({@link BadInputException}, exit 2). */
final class Checks {

    private Checks() {
    }

    /**
     * The one rule for flags that only mean something with another (README, "A flag that only
     * means something with another is refused without it"): when {@code partnerGiven} is false,
     * the first of {@code flags} given on the command line with a value other than its default
     * fails as "{@code <flag> needs <partner>}". A flag left at its default, or spelled out with
     * the default's value ({@code --eviction duel}, {@code --store-policy eager}), asks for what the
     * command does anyway and is not an error; only a value that needs the partner is.
     *
     * @param spec    the command as parsed (a mixin's {@code @Spec(MIXEE)}); null (a mixin used
     *                outside picocli) checks nothing
     * @param partner what the flags need, as the message says it, e.g. {@code --disk-cache-dir}
     */
    static void needs(CommandSpec spec, boolean partnerGiven, String partner, String... flags) {
        if (partnerGiven || spec == null) {
            return;
        }
        var parsed = spec.commandLine().getParseResult();
        for (String flag : flags) {
            if (givenOtherThanDefault(parsed, flag)) {
                throw new BadInputException(flag + " needs " + partner);
            }
        }
    }

    /**
     * Whether {@code flag} was given with a value other than its default (the command's, from its
     * default value provider too): a flag without a value (arity 0) sets true against a default of
     * false; a value equals the default when their texts match ignoring case and surrounding
     * blanks, or both are the same number ({@code 64} and {@code 64.0}), or the flag's converter
     * makes the same value of both ({@code --disk-scan-wait 10} and its default {@code 10s}).
     */
    static boolean givenOtherThanDefault(picocli.CommandLine.ParseResult parsed, String flag) {
        picocli.CommandLine.Model.OptionSpec o = parsed.matchedOption(flag);
        if (o == null) {
            return false;
        }
        String dflt = o.defaultValueString();
        if (o.arity().max() == 0) {
            Object value = o.getValue(); // typed Object: String.valueOf(T) would pick the char[] overload
            return !java.util.Objects.toString(value).equalsIgnoreCase(dflt == null || dflt.equals("null") ? "false" : dflt.trim());
        }
        java.util.List<String> given = o.originalStringValues();
        if (dflt == null || given.isEmpty()) {
            return true;
        }
        String value = given.getLast().trim();
        if (value.equalsIgnoreCase(dflt.trim())) {
            return false;
        }
        for (picocli.CommandLine.ITypeConverter<?> c : o.converters()) {
            try {
                return !java.util.Objects.equals(c.convert(value), c.convert(dflt.trim()));
            } catch (Exception e) {
                return true; // a value the converter refuses is no default
            }
        }
        try {
            return new java.math.BigDecimal(value).compareTo(new java.math.BigDecimal(dflt.trim())) != 0;
        } catch (NumberFormatException e) {
            return true;
        }
    }

    /**
     * The rule for flags that mean nothing beside another: when {@code otherGiven}, the first of
     * {@code flags} given on the command line fails as "{@code <flag> has no effect with <other>:
     * <why>}". A flag left at its default is not "given".
     *
     * @param spec null (a mixin used outside picocli) checks nothing
     */
    static void notWith(CommandSpec spec, boolean otherGiven, String other, String why, Iterable<String> flags) {
        if (!otherGiven || spec == null) {
            return;
        }
        var parsed = spec.commandLine().getParseResult();
        for (String flag : flags) {
            if (parsed.hasMatchedOption(flag)) {
                throw new BadInputException(flag + " has no effect with " + other + ": " + why);
            }
        }
    }

    static int atLeast(int value, int min, String flag) {
        if (value < min) {
            throw new BadInputException(flag + " must be at least " + min + ", got " + value);
        }
        return value;
    }

    static long atLeast(long value, long min, String flag) {
        if (value < min) {
            throw new BadInputException(flag + " must be at least " + min + ", got " + value);
        }
        return value;
    }

    /** {@code value}, refused above {@code max} in one line naming the flag and what the limit is ({@code why}). */
    static long atMost(long value, long max, String flag, String why) {
        if (value > max) {
            throw new BadInputException(flag + " must be at most " + max + " (" + why + "), got " + value);
        }
        return value;
    }

    /**
     * A compute thread count of at most 4 per core. More threads than that only queue for the
     * cores (and each holds its own scratch buffers), so a larger value is a typo.
     */
    static int atMostFourPerCore(int value, String flag) {
        if (value > mostThreads()) {
            int cores = Runtime.getRuntime().availableProcessors();
            throw new BadInputException(flag + " must be at most " + mostThreads() + " (4 per core; this machine has "
                    + cores + "), got " + value);
        }
        return value;
    }

    /** The most threads {@link #atMostFourPerCore} accepts on this machine: 4 per core. */
    static int mostThreads() {
        return 4 * Runtime.getRuntime().availableProcessors();
    }

    static double positive(double value, String flag) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new BadInputException(flag + " must be a positive number, got " + shown(value));
        }
        return value;
    }

    /**
     * A number as a user would have typed it, for a message: {@code 0} and {@code -1}, not
     * Java's {@code 0.0} and {@code -1.0}; {@code 0.1}, not {@code 0.10000000149011612} for a
     * float; {@code 1E+99} for {@code 1e99}; {@code Infinity} and {@code NaN} as such.
     */
    static String shown(double value) {
        return Double.isFinite(value) ? shown(new java.math.BigDecimal(Double.toString(value))) : Double.toString(value);
    }

    /** {@link #shown(double)} for a float flag (its shortest decimal, not its double's). */
    static String shown(float value) {
        return Float.isFinite(value) ? shown(new java.math.BigDecimal(Float.toString(value))) : Float.toString(value);
    }

    /**
     * Plain digits up to 15 before or after the point ({@code 1000000000}, {@code 0.001}), else with
     * an exponent ({@code 1E+99}, {@code 1E-46}).
     */
    private static String shown(java.math.BigDecimal d) {
        java.math.BigDecimal s = d.stripTrailingZeros();
        return s.precision() - s.scale() > 15 || s.scale() > 15 ? s.toString() : s.toPlainString();
    }

    /** An output file that can be created: a non-empty path whose parent directory exists and which is not a directory. */
    static Path outputFile(Path file, String flag) {
        if (file == null) {
            return null;
        }
        if (file.toString().isEmpty()) {
            throw new BadInputException(flag + ": empty path");
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new BadInputException(flag + " " + file + ": the directory " + parent + " does not exist");
        }
        if (Files.isDirectory(file)) {
            throw new BadInputException(flag + " " + file + ": is a directory");
        }
        return file;
    }

    /** A file a command reads or writes and the flag that names it. */
    record FileFlag(String flag, Path file) {
    }

    /**
     * Refuses one file named by two flags of which one is written: the later write would replace the
     * earlier one, or the input it was read from. Files that exist are compared by identity (a hard
     * link is the same file under another name); others by real path ({@code f}, {@code ./f} and a
     * link to it are one file). A null file (flag not given) is skipped.
     */
    static void distinctFiles(java.util.List<FileFlag> files) {
        java.util.List<FileFlag> seen = new java.util.ArrayList<>();
        for (FileFlag f : files) {
            if (f.file() == null || f.file().toString().isEmpty()) {
                continue;
            }
            for (FileFlag before : seen) {
                if (sameFile(before.file(), f.file())) {
                    throw new BadInputException(before.flag() + " and " + f.flag() + " name one file (" + f.file() + "): give each its own");
                }
            }
            seen.add(f);
        }
    }

    private static boolean sameFile(Path a, Path b) {
        if (Files.exists(a) && Files.exists(b)) {
            try {
                return Files.isSameFile(a, b);
            } catch (IOException e) {
                // unreadable: fall back to the paths; the read or write reports the rest
            }
        }
        return realPath(a).equals(realPath(b));
    }

    /** The real path of {@code file}, or for a file not yet written its directory's real path and its name. */
    private static Path realPath(Path file) {
        Path abs = file.toAbsolutePath();
        try {
            if (Files.exists(abs)) {
                return abs.toRealPath();
            }
            Path parent = abs.getParent();
            return parent == null ? abs : parent.toRealPath().resolve(abs.getFileName());
        } catch (IOException e) {
            return abs.normalize(); // unreadable directory: compare what was given; the write reports the rest
        }
    }

    /**
     * A directory to use or create: a non-empty path that is not a regular file, and, if it does
     * not exist yet, whose nearest existing ancestor is a directory (else it can never be created:
     * said here, naming the flag, not later by the tier that opens it).
     */
    static Path directory(Path dir, String flag) {
        if (dir.toString().isEmpty()) {
            throw new BadInputException(flag + ": empty path");
        }
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new BadInputException(flag + " " + dir + ": not a directory");
            }
            return dir;
        }
        Path up = dir.toAbsolutePath().getParent();
        while (up != null && !Files.exists(up)) {
            up = up.getParent();
        }
        if (up != null && !Files.isDirectory(up)) {
            throw new BadInputException(flag + " " + dir + ": cannot be created: " + up + " is not a directory");
        }
        return dir;
    }

    /** A file to read: exists and is not a directory ({@code /dev/stdin} and pipes are fine). */
    static Path inputFile(Path file, String flag) {
        if (file.toString().isEmpty()) {
            throw new BadInputException(flag + ": empty path");
        }
        exists(file, flag);
        if (Files.isDirectory(file)) {
            throw new BadInputException(flag + " " + file + ": is a directory, expected a file");
        }
        return file;
    }

    /** Most bytes {@link #secretFile} reads: a key or password is short, a larger file is the wrong one. */
    static final int SECRET_FILE_MAX_BYTES = 64 * 1024;

    /**
     * The text of a file that holds a secret alone ({@code --api-key-file}, {@code --remote-password-file}),
     * as {@link #inputFile} checks it (pipes such as {@code <(echo key)} are fine), read as UTF-8 and
     * refused past {@link #SECRET_FILE_MAX_BYTES} bytes without reading further (the whole file was read:
     * a gigabyte took as long and as much memory).
     *
     * @throws BadInputException for a missing file, a directory, a file that is too large or not
     *         UTF-8, or one that cannot be read, naming the flag and the file
     */
    static String secretFile(Path file, String flag) {
        inputFile(file, flag);
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(SECRET_FILE_MAX_BYTES + 1);
        } catch (IOException e) {
            throw new BadInputException(flag + " " + file + ": cannot read it (" + e.getMessage() + ")");
        }
        if (bytes.length > SECRET_FILE_MAX_BYTES) {
            throw new BadInputException(flag + " " + file + ": is larger than " + SECRET_FILE_MAX_BYTES / 1024
                    + " KiB; the file should hold the secret alone");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BadInputException(flag + " " + file + ": is not UTF-8 text");
        }
    }

    /**
     * The one line for a file to read that is not there, whatever the flag ({@code --model},
     * {@code --tokenizer}, {@code --trace}, {@code --prompts}, ...): {@code <flag> <file>: no such
     * file}. An empty path passes (each reader names it in its own words).
     */
    static Path exists(Path file, String flag) {
        if (!file.toString().isEmpty() && !Files.exists(file)) {
            throw new BadInputException(flag + " " + file + ": no such file");
        }
        return file;
    }
}
