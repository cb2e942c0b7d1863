package io.kvtier.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;

/**
 * A command's former flag spellings given on this command line ({@link FlagVocabulary#FORMER_NAMES}).
 * A hidden alias's setter only queues its value here: picocli applies the canonical option's
 * default after parsing, which would overwrite a value set during it. {@link #apply} sets them
 * at the start of the command, with a deprecation note each.
 */
final class FormerNames {

    private record Use(String former, String value, Runnable set) {
    }

    private final List<Use> uses = new ArrayList<>();

    /** Queues {@code set}, run by {@link #apply}, for the former flag {@code former}. */
    void use(String former, Runnable set) {
        uses.add(new Use(former, null, set));
    }

    /** As {@link #use(String, Runnable)}, for a former flag whose value was renamed too ({@code --outputs first}). */
    void use(String former, String value, Runnable set) {
        uses.add(new Use(former, value, set));
    }

    /**
     * Sets the queued values, each with a note on stderr.
     *
     * @throws BadInputException if a former flag and its replacement were both given
     */
    void apply(CommandSpec spec) {
        String command = spec.qualifiedName(" ").replaceFirst("^kvtier ", "");
        Map<String, String> names = FlagVocabulary.FORMER_NAMES.getOrDefault(command, Map.of());
        var parsed = spec.commandLine().getParseResult();
        for (Use u : uses) {
            String now = names.get(u.former());
            if (now == null) {
                throw new IllegalStateException(command + " " + u.former() + " is not in FlagVocabulary.FORMER_NAMES");
            }
            if (parsed.hasMatchedOption(now)) {
                throw new BadInputException("give " + now + " or its former name " + u.former() + ", not both");
            }
            System.err.println("kvtier: " + u.former() + (u.value() == null ? "" : " " + u.value())
                    + " is deprecated and will be removed in the next release; use " + now
                    + (u.value() == null ? "" : " (see --help)"));
            u.set().run();
        }
        uses.clear();
    }
}
