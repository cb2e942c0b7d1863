package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Member;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Walks every command's options (picocli's model of {@link Main}) against {@link FlagVocabulary}:
 * one name per concept, one declaration per shared name, former names hidden and kept only as
 * listed, and no message naming a flag that no command has.
 */
class FlagVocabularyTest {

    private static final Set<String> STANDARD = Set.of("--help", "--version", "-h", "-V");

    /** Every command by its path ("bench offload"), with its options. */
    private static Map<String, List<OptionSpec>> commands() {
        Map<String, List<OptionSpec>> out = new LinkedHashMap<>();
        walk(new CommandLine(new Main()).getCommandSpec(), "", out);
        return out;
    }

    private static void walk(CommandSpec spec, String prefix, Map<String, List<OptionSpec>> out) {
        for (Map.Entry<String, CommandLine> sub : spec.subcommands().entrySet()) {
            String path = (prefix + " " + sub.getKey()).strip();
            CommandSpec s = sub.getValue().getCommandSpec();
            if (s.subcommands().isEmpty()) {
                out.put(path, s.options().stream().filter(o -> !STANDARD.contains(o.longestName())).toList());
            } else {
                walk(s, path, out);
            }
        }
    }

    private static Class<?> declaringClass(OptionSpec o) {
        return ((Member) o.userObject()).getDeclaringClass();
    }

    @Test
    void theWalkSeesEveryCommand() {
        assertThat(commands()).containsKeys("generate", "replay", "make-model", "bench generate", "bench offload",
                "bench scheduler");
    }

    @Test
    void noCommandShowsASecondNameForAKnownConcept() {
        Map<String, String> other = new HashMap<>();
        for (FlagVocabulary.Concept c : FlagVocabulary.CONCEPTS) {
            c.otherNames().forEach(n -> other.put(n, c.flag()));
        }
        List<String> found = new ArrayList<>();
        commands().forEach((cmd, options) -> {
            for (OptionSpec o : options) {
                for (String name : o.names()) {
                    if (!o.hidden() && other.containsKey(name)) {
                        found.add(cmd + " " + name + " (the vocabulary's name is " + other.get(name) + ")");
                    }
                }
            }
        });
        assertThat(found).isEmpty();
    }

    @Test
    void aSharedConceptIsDeclaredOnlyWhereTheVocabularySays() {
        Map<String, FlagVocabulary.Concept> byFlag = new HashMap<>();
        FlagVocabulary.CONCEPTS.forEach(c -> byFlag.put(c.flag(), c));
        List<String> wrong = new ArrayList<>();
        commands().forEach((cmd, options) -> {
            for (OptionSpec o : options) {
                FlagVocabulary.Concept c = byFlag.get(o.longestName());
                if (!o.hidden() && c != null && !c.declaredIn().contains(declaringClass(o))) {
                    wrong.add(cmd + " " + o.longestName() + " declared in " + declaringClass(o).getSimpleName());
                }
            }
        });
        assertThat(wrong).isEmpty();
    }

    @Test
    void aNameThatSeveralCommandsHaveIsInTheVocabulary() {
        Map<String, Set<String>> commandsByName = new HashMap<>();
        commands().forEach((cmd, options) -> options.stream().filter(o -> !o.hidden())
                .forEach(o -> List.of(o.names()).forEach(n -> commandsByName.computeIfAbsent(n, k -> new TreeSet<>()).add(cmd))));
        Set<String> concepts = new TreeSet<>();
        FlagVocabulary.CONCEPTS.forEach(c -> concepts.add(c.flag()));
        List<String> ungoverned = new ArrayList<>();
        commandsByName.forEach((name, cmds) -> {
            if (cmds.size() > 1 && !concepts.contains(name)) {
                ungoverned.add(name + " in " + cmds);
            }
        });
        assertThat(ungoverned).as("names shared by commands but missing from FlagVocabulary.CONCEPTS").isEmpty();
    }

    @Test
    void formerNamesAreHiddenAliasesOfAFlagTheCommandHas() {
        Map<String, List<OptionSpec>> all = commands();
        List<String> wrong = new ArrayList<>();
        all.forEach((cmd, options) -> {
            Map<String, String> former = FlagVocabulary.FORMER_NAMES.getOrDefault(cmd, Map.of());
            Set<String> visible = new TreeSet<>();
            options.stream().filter(o -> !o.hidden()).forEach(o -> visible.addAll(List.of(o.names())));
            for (OptionSpec o : options) {
                if (o.hidden() && !former.containsKey(o.longestName())) {
                    wrong.add(cmd + " " + o.longestName() + ": hidden but not a former name");
                }
            }
            former.forEach((old, now) -> {
                if (options.stream().noneMatch(o -> o.hidden() && o.longestName().equals(old))) {
                    wrong.add(cmd + " " + old + ": listed as a former name but not kept");
                }
                if (!visible.contains(now)) {
                    wrong.add(cmd + " " + old + ": its replacement " + now + " is not an option of the command");
                }
            });
        });
        assertThat(FlagVocabulary.FORMER_NAMES.keySet()).allMatch(all::containsKey);
        assertThat(wrong).isEmpty();
    }

    @Test
    void theTableIsConsistent() {
        Set<String> flags = new TreeSet<>();
        for (FlagVocabulary.Concept c : FlagVocabulary.CONCEPTS) {
            assertThat(flags.add(c.flag())).as("%s listed twice", c.flag()).isTrue();
        }
        for (FlagVocabulary.Concept c : FlagVocabulary.CONCEPTS) {
            assertThat(c.otherNames()).as("%s's other names", c.flag()).doesNotContainAnyElementsOf(flags);
        }
    }

    /** A flag named in a message of the main sources (any module) is an option some command has today. */
    @Test
    void messagesNameOnlyFlagsThatExist() throws IOException {
        Set<String> visible = new TreeSet<>(STANDARD);
        visible.addAll(Set.of("--add-opens", "--add-modules", "--enable-native-access")); // the java launcher's, named in advice
        // redis-benchmark's, on the command line bench offload gives it
        visible.addAll(Set.of("--user", "--tls", "--cacert", "--dbnum"));
        commands().values().forEach(options -> options.stream().filter(o -> !o.hidden())
                .forEach(o -> visible.addAll(List.of(o.names()))));
        Map<String, Set<String>> former = new HashMap<>();
        FlagVocabulary.FORMER_NAMES.values().forEach(m -> m.keySet().forEach(k -> former.put(k, Set.of())));
        Pattern literal = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");
        Pattern flag = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*");
        List<String> unknown = new ArrayList<>();
        Path root = Path.of("").toAbsolutePath().getParent();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(p -> p.getFileName().toString().startsWith("kvtier-")).toList()) {
                Path src = module.resolve("src/main/java");
                if (!Files.isDirectory(src)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(src)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                        String text = Files.readString(f);
                        if (text.contains("public static void main(") && !f.endsWith("Main.java")
                                || f.endsWith("FlagVocabulary.java")) {
                            continue; // a developer tool with a command line of its own; the table of names itself
                        }
                        Matcher m = literal.matcher(text);
                        while (m.find()) {
                            Matcher fm = flag.matcher(m.group(1));
                            while (fm.find()) {
                                if (!visible.contains(fm.group()) && !former.containsKey(fm.group())) {
                                    unknown.add(root.relativize(f) + ": " + fm.group());
                                }
                            }
                        }
                    }
                }
            }
        }
        assertThat(unknown).isEmpty();
    }

    /** The out-of-memory advice names only flags of the command that ran. */
    @Test
    void memoryAdviceNamesTheCommandsOwnFlags() {
        CommandLine replay = new CommandLine(new Main());
        replay.parseArgs("replay", "--trace", "t.jsonl");
        assertThat(Main.memoryAdvice(replay)).contains("--device-tokens", "--host-cache-tokens")
                .doesNotContain("--device-blocks", "--host-cache-bytes", "--block-size", "model size");
        CommandLine generate = new CommandLine(new Main());
        generate.parseArgs("generate");
        assertThat(Main.memoryAdvice(generate)).contains("--device-blocks", "--block-size", "--host-cache-bytes", "model size")
                .doesNotContain("--device-tokens");
    }

    /** A shared option shows each command's own default in --help, and hidden former names do not show. */
    @Test
    void helpShowsEachCommandsDefaultsAndHidesFormerNames() {
        CliRun generate = CliRun.of("generate", "--help");
        assertThat(generate.out()).contains("token positions per KV block (default 16)", "(default 256)");
        CliRun replay = CliRun.of("replay", "--help");
        assertThat(replay.out()).contains("token positions per KV block (default 512)", "--eviction", "--stats-json",
                        "1 in instant mode").doesNotContain("null")
                .doesNotContain("--policy", "--json ", "--host-tokens", "--outputs");
        CliRun bench = CliRun.of("bench", "generate", "--help");
        assertThat(bench.out()).contains("(default 32)").doesNotContain("--batch ", "--decode-tokens");
    }

    /**
     * The README's vocabulary table lists, for the first flag of each row, exactly the commands
     * that have it (a new user reads that column to know where a flag works). Rows with an empty
     * column are about several commands' different flags; "/ x" names a second flag's commands.
     */
    @Test
    void theReadmeTableListsEveryCommandThatHasTheFlag() throws IOException {
        Map<String, Set<String>> commandsByName = new HashMap<>();
        commands().forEach((cmd, options) -> options.stream().filter(o -> !o.hidden())
                .forEach(o -> List.of(o.names()).forEach(n -> commandsByName.computeIfAbsent(n, k -> new TreeSet<>()).add(cmd))));
        String readme = Files.readString(Path.of("").toAbsolutePath().getParent().resolve("README.md"));
        int start = readme.indexOf("| concept | flag | commands |");
        assertThat(start).as("the table in the README").isPositive();
        Pattern firstFlag = Pattern.compile("`(--[a-z0-9-]+)");
        List<String> wrong = new ArrayList<>();
        int rows = 0;
        for (String line : readme.substring(start).lines().skip(2).takeWhile(l -> l.startsWith("|")).toList()) {
            String[] cells = line.split("(?<!\\\\)\\|", -1);
            String listed = cells[3].split(" / ")[0].replaceAll("\\([^)]*\\)", "").strip();
            Matcher m = firstFlag.matcher(cells[2]);
            if (listed.isEmpty() || !m.find()) {
                continue;
            }
            rows++;
            Set<String> want = new TreeSet<>();
            for (String c : listed.split(",")) {
                want.add(c.strip());
            }
            Set<String> have = commandsByName.getOrDefault(m.group(1), Set.of());
            if (!want.equals(have)) {
                wrong.add(m.group(1) + ": README says " + want + ", the commands are " + have);
            }
        }
        assertThat(rows).isGreaterThan(10);
        assertThat(wrong).isEmpty();
    }

    /** --help shows a word for each option's value (N, FILE, MS), never picocli's default: the Java field's name. */
    @Test
    void everyOptionWithAValueHasALabelNotAFieldName() {
        List<String> raw = new ArrayList<>();
        commands().forEach((cmd, options) -> options.stream().filter(o -> !o.hidden() && o.arity().max() > 0)
                .filter(o -> o.paramLabel().matches("<[a-z][A-Za-z0-9]*>"))
                .forEach(o -> raw.add(cmd + " " + o.longestName() + "=" + o.paramLabel())));
        assertThat(raw).isEmpty();
    }
}
