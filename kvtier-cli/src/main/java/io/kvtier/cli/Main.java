package io.kvtier.cli;

import io.kvtier.model.ModelFormatException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code ./kvtier <command>}: the command-line front end. Exit codes: 0 success, 2 bad input
 * (one line on stderr), 1 a bug (stack trace on stderr).
 */
@Command(name = "kvtier", mixinStandardHelpOptions = true, version = "kvtier 0.1.0",
        description = "KV-cache offloading engine for LLM inference on the JVM.",
        subcommands = {GenerateCommand.class, MakeModelCommand.class, BenchCommand.class, ReplayCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: generate, make-model or bench");
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns the exit code (for tests). */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setParameterExceptionHandler((ex, a) -> {
            System.err.println("kvtier: " + ex.getMessage() + " (see --help)");
            return 2;
        });
        cli.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (isBadInput(ex)) {
                System.err.println("kvtier: " + ex.getMessage());
                return 2;
            }
            System.err.println("kvtier: internal error (a bug): " + ex);
            ex.printStackTrace(System.err);
            return 1;
        });
        return cli.execute(args);
    }

    /** Exceptions that describe a user's mistake rather than a bug. */
    static boolean isBadInput(Throwable ex) {
        return ex instanceof BadInputException || ex instanceof ModelFormatException
                || ex instanceof IllegalArgumentException;
    }
}
