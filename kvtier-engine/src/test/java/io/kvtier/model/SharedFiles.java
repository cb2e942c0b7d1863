package io.kvtier.model;

import io.kvtier.engine.ReferenceRecords;
import java.nio.file.Path;
import java.util.List;

/** The shared model files and reference records, as the model tests name them (see {@link ReferenceRecords}). */
final class SharedFiles {

    private SharedFiles() {
    }

    static Path shared() {
        return ReferenceRecords.shared();
    }

    static Path stories260K() {
        return ReferenceRecords.model();
    }

    static Path tok512() {
        return ReferenceRecords.tokenizer();
    }

    /** One line of reference/stories260K_greedy.jsonl. */
    record Reference(String prompt, int steps, int[] promptIds, int[] generatedIds, String text) {
    }

    static List<Reference> greedyReferences() {
        return ReferenceRecords.load().stream()
                .map(r -> new Reference(r.prompt(), r.steps(), r.promptIds(), r.generated(), r.text()))
                .toList();
    }
}
