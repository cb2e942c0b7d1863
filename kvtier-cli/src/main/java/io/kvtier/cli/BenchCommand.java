package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code ./kvtier bench <what>}: the project's own speed measurements. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Measure speed.",
        subcommands = {BenchGenerateCommand.class, BenchOffloadCommand.class, BenchSchedulerCommand.class, BenchServeCommand.class})
final class BenchCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing benchmark: " + Main.subcommands(spec));
    }
}
