package io.kvtier.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --stats-json FILE}, {@code --stats-csv FILE}: a command's summary record as files, the
 * CSV's columns being the JSON's fields ({@link StatsFiles}).
 */
public final class StatsOptions {

    @Option(names = "--stats-json", paramLabel = "FILE", description = "also write the summary as JSON")
    Path json;

    @Option(names = "--stats-csv", paramLabel = "FILE", description = "also write the summary as CSV (one row per run; the JSON's fields, nested ones joined with dots)")
    Path csv;

    /**
     * Checks both paths can be written (before the run), and that no two of them, the command's
     * {@code otherOutputs} (each checked as well) and its {@code inputs} name one file.
     */
    public void check(List<Checks.FileFlag> otherOutputs, List<Checks.FileFlag> inputs) {
        Checks.outputFile(json, "--stats-json");
        Checks.outputFile(csv, "--stats-csv");
        otherOutputs.forEach(o -> Checks.outputFile(o.file(), o.flag()));
        List<Checks.FileFlag> all = new java.util.ArrayList<>(inputs);
        all.add(new Checks.FileFlag("--stats-json", json));
        all.add(new Checks.FileFlag("--stats-csv", csv));
        all.addAll(otherOutputs);
        Checks.distinctFiles(all);
    }

    /**
     * Writes the records to the files asked for: JSON as one object for one record, or as an array
     * ({@code asArray}, e.g. a sweep); CSV one row per record.
     */
    public void write(List<? extends Map<String, ?>> records, boolean asArray) {
        write(json, "--stats-json", () -> StatsFiles.writeJson(json, asArray ? records : records.getFirst()));
        write(csv, "--stats-csv", () -> StatsFiles.writeCsv(csv, records));
    }

    /** Sets the JSON file (a deprecated alias's setter). */
    void setJson(Path file) {
        json = file;
    }

    /** Sets the CSV file (a deprecated alias's setter). */
    void setCsv(Path file) {
        csv = file;
    }

    private interface Writer {
        void run() throws IOException;
    }

    private static void write(Path file, String flag, Writer w) {
        if (file == null) {
            return;
        }
        try {
            w.run();
        } catch (IOException e) {
            throw new BadInputException(flag + " " + file + ": cannot write (" + e.getMessage() + ")", e);
        }
    }
}
