package io.kvtier.cli;

import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.ModelConfig;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ./kvtier make-model OUT ...}: a random-weight llama2.c checkpoint, to measure speed at larger shapes. */
@Command(name = "make-model", mixinStandardHelpOptions = true,
        description = "Write a random-weight checkpoint in the llama2.c format (default shape: stories15M).")
final class MakeModelCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "OUT", description = "file to write")
    Path out;

    @Option(names = "--dim", defaultValue = "288", description = "model width (default ${DEFAULT-VALUE})") int dim;
    @Option(names = "--hidden-dim", defaultValue = "768", description = "feed-forward width (default ${DEFAULT-VALUE})") int hiddenDim;
    @Option(names = "--layers", defaultValue = "6", description = "transformer layers (default ${DEFAULT-VALUE})") int layers;
    @Option(names = "--heads", defaultValue = "6", description = "query heads; must divide --dim (default ${DEFAULT-VALUE})") int heads;
    @Option(names = "--kv-heads", defaultValue = "6", description = "key/value heads; must divide --heads (default ${DEFAULT-VALUE})") int kvHeads;
    @Option(names = "--vocab", defaultValue = "32000", description = "vocabulary size (default ${DEFAULT-VALUE})") int vocab;
    @Option(names = "--seq-len", defaultValue = "256", description = "context length in tokens (default ${DEFAULT-VALUE})") int seqLen;
    @Option(names = "--seed", defaultValue = "1", description = "random seed of the weights (default ${DEFAULT-VALUE})") long seed;
    @Option(names = "--force", description = "replace OUT if it exists") boolean force;

    @Override
    public Integer call() throws java.io.IOException {
        for (var f : java.util.Map.of("--dim", dim, "--hidden-dim", hiddenDim, "--layers", layers, "--heads", heads,
                "--kv-heads", kvHeads, "--vocab", vocab, "--seq-len", seqLen).entrySet()) {
            Checks.atLeast(f.getValue(), 1, f.getKey());
        }
        if (dim % heads != 0 || (dim / heads) % 2 != 0) {
            throw new BadInputException("--heads " + heads + " must divide --dim " + dim + " into an even head size");
        }
        if (heads % kvHeads != 0) {
            throw new BadInputException("--kv-heads " + kvHeads + " must divide --heads " + heads);
        }
        Checks.outputFile(out, "make-model OUT");
        if (java.nio.file.Files.exists(out) && !force) {
            throw new BadInputException("make-model " + out + ": the file exists; give --force to replace it");
        }
        ModelConfig cfg = new ModelConfig(dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen, true);
        CheckpointWriter.writeRandom(out, cfg, seed); // to a temporary name, renamed: a running reader keeps the old file
        System.err.printf("kvtier: wrote %s: %,d parameters, dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d, seq %d%n",
                out, cfg.parameterCount(), dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen);
        return 0;
    }
}
