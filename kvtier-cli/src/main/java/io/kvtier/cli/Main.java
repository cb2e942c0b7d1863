package io.kvtier.cli;

import io.kvtier.model.ModelFormatException;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code ./kvtier <command>}: the command-line front end. Exit codes: 0 success, 2 bad input
 * (one line on stderr), 1 a bug (stack trace on stderr).
 */
@Command(name = "kvtier", mixinStandardHelpOptions = true, version = "kvtier 0.1.0",
        description = "KV-cache offloading engine for LLM inference on the JVM.",
        subcommands = {GenerateCommand.class, ServeCommand.class, KvEventsCommand.class, ReplayCommand.class, MakeModelCommand.class,
            BenchCommand.class, AotTrainingCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: " + subcommands(spec));
    }

    /**
     * The visible subcommands of {@code spec} in the order they are registered, "a, b or c": read
     * from picocli, so a new command is never missing from the message.
     */
    static String subcommands(CommandLine.Model.CommandSpec spec) {
        java.util.List<String> names = spec.subcommands().values().stream().map(CommandLine::getCommandSpec)
                .filter(s -> !s.usageMessage().hidden()).map(CommandLine.Model.CommandSpec::name).distinct().toList();
        return names.size() == 1 ? names.getFirst()
                : String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.getLast();
    }

    public static void main(String[] args) {
        StandardOutput.install(); // a failed write to standard output keeps its cause
        Warmup.start(args);
        System.exit(exitStatus(run(args), System.out, System.err));
    }

    /**
     * The process's exit status for a command that returned {@code code}: a command that succeeded
     * while its standard output {@code out} failed (a full disk, {@code >/dev/full}, a reader gone)
     * did not succeed: {@link StandardOutput#statusOfFailedOutput} (1 with the cause on {@code err},
     * or 141 quietly for a reader gone). {@code bench}, {@code make-model} and {@code --help} said 0
     * with their output lost (a new user's trial); {@code generate} says it itself.
     */
    static int exitStatus(int code, java.io.PrintStream out, java.io.PrintStream err) {
        return code == 0 && out.checkError() ? StandardOutput.statusOfFailedOutput(err) : code;
    }

    /** Runs a command line and returns the exit code (for tests). */
    public static int run(String... args) {
        // One line per log record (the disk scan reports removed files), not the JDK's two-line default.
        System.setProperty("java.util.logging.SimpleFormatter.format", "kvtier: %4$s: %5$s%6$s%n");
        CommandLine cli = new CommandLine(new Main());
        shareVersion(cli);
        wholeNumbersWithoutPlus(cli);
        cli.setParameterExceptionHandler((ex, a) -> {
            System.err.println("kvtier: " + describe(ex));
            return 2;
        });
        cli.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (isBadInput(ex)) {
                System.err.println("kvtier: " + describe(ex));
                return 2;
            }

            System.err.println("kvtier: internal error (a bug): " + ex);
            ex.printStackTrace(System.err);
            return 1;
        });
        try {
            return cli.execute(args);
        } catch (OutOfMemoryError e) {
            // Off-heap slabs are allocated up front: too large a pool or tier fails here, not mid-run.
            System.err.println("kvtier: not enough memory (" + e.getMessage() + ")" + memoryAdvice(cli));
            return 2;
        }
    }

    /**
     * Gives every subcommand the top command's version: picocli's {@code -V} of a subcommand prints
     * that command's own version, and none was set (its help listed the flag, which printed nothing).
     */
    static void shareVersion(CommandLine cli) {
        for (CommandLine sub : cli.getSubcommands().values()) {
            sub.getCommandSpec().version(cli.getCommandSpec().version());
            shareVersion(sub);
        }
    }

    /**
     * Whole-number flags refuse a leading '+' as sizes do ({@code --port +80} was taken, {@code +1M} refused);
     * otherwise Java's reading, as picocli's own converters do.
     */
    static void wholeNumbersWithoutPlus(CommandLine cli) {
        CommandLine.ITypeConverter<Long> toLong = text -> wholeNumber(text, Long.MIN_VALUE, Long.MAX_VALUE);
        CommandLine.ITypeConverter<Integer> toInt = text -> (int) wholeNumber(text, Integer.MIN_VALUE, Integer.MAX_VALUE);
        cli.registerConverter(Integer.class, toInt).registerConverter(int.class, toInt);
        cli.registerConverter(Long.class, toLong).registerConverter(long.class, toLong);
    }

    /** {@code text} as a whole number in {@code min..max}; {@link #describe} words the refusal (the flag's most). */
    private static long wholeNumber(String text, long min, long max) {
        try {
            long v = Long.parseLong(text);
            if (!text.startsWith("+") && v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // no number: refused below, as a sign or a value past the type's range is
        }
        throw new CommandLine.TypeConversionException("'" + text + "' is not a whole number");
    }

    /**
     * One line for a command-line mistake. A number that does not convert names the flag, the
     * value and the range in kvtier's words instead of picocli's ("is not an int").
     */
    static String describe(CommandLine.ParameterException ex) {
        if (ex.getArgSpec() instanceof CommandLine.Model.OptionSpec o && ex.getValue() != null
                && (ex.getCause() instanceof CommandLine.TypeConversionException
                    || String.valueOf(ex.getMessage()).contains("' is not a"))) {
            if (ex.getCause() instanceof TokenCount.TooLarge && ownMost(o) != null) {
                // the form of the flag's own range check ("--seq-len must be at most 4194304, got 2147483647")
                return o.longestName() + " must be at most " + most(o, Integer.MAX_VALUE) + ", got " + ex.getValue();
            }
            if (saysWhy(o) && ex.getCause() instanceof CommandLine.TypeConversionException tc) {
                return o.longestName() + ": " + tc.getMessage();
            }
            Class<?> t = o.type();
            String kind = t == int.class || t == Integer.class ? "a whole number " + bound(o, Integer.MAX_VALUE)
                    : t == long.class || t == Long.class ? "a whole number " + bound(o, Long.MAX_VALUE)
                    : t == double.class || t == Double.class || t == float.class || t == Float.class ? "a number" : null;
            if (kind != null) {
                return o.longestName() + ": '" + ex.getValue() + "' is not " + kind;
            }
        }
        if (ex instanceof CommandLine.UnmatchedArgumentException u) {
            List<String> near = u.getSuggestions().stream().distinct().limit(3).toList();
            CommandLine.Model.CommandSpec at = u.getCommandLine().getCommandSpec();
            List<String> args = u.getUnmatched();
            String what = ex.getMessage();
            if (!at.subcommands().isEmpty() && !args.isEmpty() && !args.get(0).startsWith("-")) {
                // a word where a command goes: picocli's "Unmatched argument at index 0" told a new user nothing
                what = "unknown " + (at.userObject() instanceof BenchCommand ? "benchmark" : "command") + " '" + args.get(0) + "'"
                        + (near.isEmpty() ? ": " + subcommands(at) : "");
            }
            // picocli's nearest names: a new user's misspelt command and flag got only "see --help"
            return what + (near.isEmpty() ? "" : "; did you mean " + String.join(" or ", near) + "?") + " (see --help)";
        }
        return ex.getMessage() + " (see --help)";
    }

    /**
     * The most whole-number flag {@code o} takes: its {@link Most} (a trial's {@code --remote-mib-per-size 1.5}
     * said "up to 9223372036854775807" though the flag takes at most 65536), else its type's {@code typeMost}.
     */
    static String most(CommandLine.Model.OptionSpec o, long typeMost) {
        Most m = ownMost(o);
        if (m == null) {
            return Long.toString(typeMost);
        }
        return m.fourPerCore() ? Checks.mostThreads() + " (4 per core)" : Long.toString(m.value());
    }

    /** "up to" the most {@code o} takes, or its {@link Most#rule} where it has one. */
    private static String bound(CommandLine.Model.OptionSpec o, long typeMost) {
        Most m = ownMost(o);
        return m != null && !m.rule().isEmpty() ? m.rule() : "up to " + most(o, typeMost);
    }

    private static Most ownMost(CommandLine.Model.OptionSpec o) {
        return o.userObject() instanceof java.lang.reflect.AnnotatedElement e ? e.getAnnotation(Most.class) : null;
    }

    /** Whether {@code o}'s converter is kvtier's (token counts, times), whose refusal says what is wrong. */
    private static boolean saysWhy(CommandLine.Model.OptionSpec o) {
        for (CommandLine.ITypeConverter<?> c : o.converters()) {
            if (c instanceof TokenCount || c instanceof TimeFlag) {
                return true;
            }
        }
        return false;
    }

    /**
     * The flags of the command that ran which size its memory, as advice: its own ({@link SizedByFlags}),
     * else those of the engine's pools and tiers it has; a command without such flags gets none.
     */
    static String memoryAdvice(CommandLine cli) {
        CommandLine.ParseResult r = cli.getParseResult();
        while (r != null && r.subcommand() != null) {
            r = r.subcommand();
        }
        if (r == null) {
            return "";
        }
        CommandLine.Model.CommandSpec spec = r.commandSpec();
        if (spec.userObject() instanceof SizedByFlags own) {
            return "; lower " + own.memoryAdvice();
        }
        boolean model = spec.findOption("--model") != null;
        // With a model, the pool's blocks are --block-size positions of its KV each (a trace replay counts tokens).
        java.util.List<String> flags = java.util.stream.Stream.of("--device-blocks", "--device-tokens", "--block-size",
                "--host-cache-bytes", "--host-cache-chunks", "--host-cache-tokens", "--max-running")
                .filter(f -> spec.findOption(f) != null && (model || !f.equals("--block-size"))).toList();
        return flags.isEmpty() ? "" : "; lower " + String.join(", ", flags) + (model ? " or the model size" : "");
    }

    /**
     * Exceptions that describe a user's mistake or the environment (a path that is a directory, a
     * full disk, text that is not UTF-8) rather than a bug.
     */
    static boolean isBadInput(Throwable ex) {
        return ex instanceof BadInputException || ex instanceof ModelFormatException
                || ex instanceof IllegalArgumentException || ex instanceof java.io.IOException
                || ex instanceof java.io.UncheckedIOException;
    }

    static String describe(Throwable ex) {
        Throwable cause = ex instanceof java.io.UncheckedIOException u ? u.getCause() : ex;
        if (cause instanceof java.nio.charset.CharacterCodingException) {
            return "input is not valid UTF-8 text (" + ex.getMessage() + ")";
        }
        if (cause instanceof java.nio.file.FileSystemException fs) {
            return fs.getMessage(); // names the path and the reason, e.g. "x: Is a directory"
        }
        if (cause instanceof java.io.IOException io && !(ex instanceof java.io.UncheckedIOException)) {
            return io.getClass().getSimpleName() + ": " + io.getMessage();
        }
        if (ex instanceof java.io.UncheckedIOException u && u.getCause() != null) {
            // "cannot write checkpoint X" says what failed; the cause says why ("No space left on device").
            String why = u.getCause().getMessage();
            if (u.getMessage().equals(u.getCause().toString())) {
                return u.getCause().getClass().getSimpleName() + ": " + why;
            }
            if (why != null && !u.getMessage().contains(why)) {
                return u.getMessage() + ": " + why;
            }
        }
        return ex.getMessage();
    }
}
