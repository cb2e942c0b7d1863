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

    @Option(names = "--dim", defaultValue = "288") int dim;
    @Option(names = "--hidden-dim", defaultValue = "768") int hiddenDim;
    @Option(names = "--layers", defaultValue = "6") int layers;
    @Option(names = "--heads", defaultValue = "6") int heads;
    @Option(names = "--kv-heads", defaultValue = "6") int kvHeads;
    @Option(names = "--vocab", defaultValue = "32000") int vocab;
    @Option(names = "--seq-len", defaultValue = "256") int seqLen;
    @Option(names = "--seed", defaultValue = "1") long seed;

    @Override
    public Integer call() {
        ModelConfig cfg = new ModelConfig(dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen, true);
        CheckpointWriter.writeRandom(out, cfg, seed);
        System.err.printf("kvtier: wrote %s: %,d parameters, dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d, seq %d%n",
                out, cfg.parameterCount(), dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen);
        return 0;
    }
}
