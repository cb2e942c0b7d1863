package io.kvtier.cli;

import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.gguf.GgufWriter;
import io.kvtier.model.tensor.TensorType;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./kvtier make-model OUT ...}: a random-weight model, a llama2.c checkpoint or a GGUF
 * file (matrices F32, F16, BF16, Q8_0 or Q4_0), to measure speed at larger shapes.
 */
@Command(name = "make-model", mixinStandardHelpOptions = true,
        description = "Write a random-weight model, llama2.c or GGUF (default shape: stories15M).")
final class MakeModelCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "OUT", description = "file to write")
    Path out;

    @Most(ModelConfig.MAX_DIM) @Option(names = "--dim", paramLabel = "N", defaultValue = "288", description = "model width (default ${DEFAULT-VALUE})") int dim;
    @Most(ModelConfig.MAX_HIDDEN) @Option(names = "--hidden-dim", paramLabel = "N", defaultValue = "768", description = "feed-forward width (default ${DEFAULT-VALUE})") int hiddenDim;
    @Most(ModelConfig.MAX_LAYERS) @Option(names = "--layers", paramLabel = "N", defaultValue = "6", description = "transformer layers (default ${DEFAULT-VALUE})") int layers;
    // --heads and --kv-heads: their most depends on --dim (288 takes at most 144 heads: an even head size), so their rule.
    @Most(rule = HEADS_RULE) @Option(names = "--heads", paramLabel = "N", defaultValue = "6", description = "query heads; must divide --dim into an even head size (default ${DEFAULT-VALUE})") int heads;
    @Most(rule = KV_HEADS_RULE) @Option(names = "--kv-heads", paramLabel = "N", defaultValue = "6", description = "key/value heads; must divide --heads (default ${DEFAULT-VALUE})") int kvHeads;
    @Most(value = ModelConfig.MAX_VOCAB, rule = "from " + MIN_VOCAB + " to " + ModelConfig.MAX_VOCAB)
    @Option(names = "--vocab", paramLabel = "N", defaultValue = "32000", description = "vocabulary size, at least " + MIN_VOCAB + " (default ${DEFAULT-VALUE})") int vocab;
    @Most(ModelConfig.MAX_SEQ_LEN) @Option(names = "--seq-len", converter = TokenCount.class, paramLabel = "N", defaultValue = "256", description = "context length in tokens (default ${DEFAULT-VALUE})") int seqLen;
    @Option(names = "--seed", paramLabel = "SEED", defaultValue = "1", description = "random seed of the weights (default ${DEFAULT-VALUE})") long seed;
    @Option(names = "--force", description = "replace OUT if it exists") boolean force;
    @Option(names = "--format", defaultValue = "llama2c", paramLabel = "FORMAT",
            description = "llama2c or gguf (default ${DEFAULT-VALUE})") String format;
    @Option(names = "--type", defaultValue = "f32", paramLabel = "TYPE",
            description = "GGUF matrix encoding: f32, f16, bf16, q8_0 or q4_0 (default ${DEFAULT-VALUE}; norms stay f32)") String type;

    /** The smallest vocabulary a tokenizer can have: 3 special tokens and 256 byte tokens. */
    static final int MIN_VOCAB = 3 + 256;

    static final String HEADS_RULE = "that divides --dim into an even head size";
    static final String KV_HEADS_RULE = "that divides --heads";

    @Override
    public Integer call() throws java.io.IOException {
        // A vocabulary a tokenizer can have: llama2.c's (and SentencePiece's byte fallback) starts with
        // <unk>, <s>, </s> and the 256 byte tokens; fewer rows would have no id for some byte of any text.
        // First, so that --vocab 0 names this least, not 1.
        if (vocab < MIN_VOCAB) {
            throw new BadInputException("--vocab must be at least " + MIN_VOCAB + " (3 special tokens and the 256 byte tokens"
                    + " of a llama2.c tokenizer), got " + vocab);
        }
        // Each size with the largest a model file may hold (ModelConfig's bounds), in the flags' order.
        record Size(String flag, int value, int max) {
        }
        for (Size f : new Size[] {new Size("--dim", dim, ModelConfig.MAX_DIM), new Size("--hidden-dim", hiddenDim, ModelConfig.MAX_HIDDEN),
                new Size("--layers", layers, ModelConfig.MAX_LAYERS),
                new Size("--heads", heads, Integer.MAX_VALUE), // more than --dim / 2: the divide check below says so
                new Size("--kv-heads", kvHeads, Integer.MAX_VALUE), // more than --heads: the divide check below says so
                new Size("--vocab", vocab, ModelConfig.MAX_VOCAB),
                new Size("--seq-len", seqLen, ModelConfig.MAX_SEQ_LEN)}) {
            Checks.atLeast(f.value(), 1, f.flag());
            if (f.value() > f.max()) {
                throw new BadInputException(f.flag() + " must be at most " + f.max() + ", got " + f.value());
            }
        }
        if (dim % heads != 0 || (dim / heads) % 2 != 0) {
            throw new BadInputException("--heads " + heads + " must divide --dim " + dim + " into an even head size");
        }
        if (heads % kvHeads != 0) {
            throw new BadInputException("--kv-heads " + kvHeads + " must divide --heads " + heads);
        }
        boolean gguf = switch (format) {
            case "llama2c" -> false;
            case "gguf" -> true;
            default -> throw new BadInputException("--format must be llama2c or gguf, got '" + format + "'");
        };
        TensorType tensorType = tensorType(type);
        if (!gguf && tensorType != TensorType.F32) {
            throw new BadInputException("--type " + type + " needs --format gguf (llama2.c checkpoints are f32)");
        }
        if (gguf && (dim % tensorType.blockValues() != 0 || hiddenDim % tensorType.blockValues() != 0)) {
            throw new BadInputException("--type " + type + " needs --dim and --hidden-dim that are multiples of "
                    + tensorType.blockValues() + ", got " + dim + " and " + hiddenDim);
        }
        Checks.outputFile(out, "make-model OUT");
        if (java.nio.file.Files.exists(out) && !force) {
            throw new BadInputException("make-model " + out + ": the file exists; give --force to replace it");
        }
        ModelConfig cfg = new ModelConfig(dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen, true);
        checkRoom(out, cfg, tensorType);
        // Both writers write a temporary name and rename it: a running reader keeps the old file.
        if (gguf) {
            GgufWriter.writeRandom(out, cfg, tensorType, seed);
        } else {
            CheckpointWriter.writeRandom(out, cfg, seed);
        }
        System.err.printf("kvtier: wrote %s (%s%s): %s, dim %d, hidden %d, %s, %s, %s, vocab %d, seq %d%n",
                out, format, gguf ? " " + type : "", io.kvtier.text.Plural.grouped(cfg.parameterCount(), "parameter"), dim, hiddenDim,
                io.kvtier.text.Plural.count(layers, "layer"), io.kvtier.text.Plural.count(heads, "head"),
                io.kvtier.text.Plural.count(kvHeads, "kv head"), vocab, seqLen);
        return 0;
    }

    /**
     * Refuses a model larger than the free space of OUT's file system before writing a byte
     * (the weights' bytes in their encoding: a lower bound of the file's size).
     */
    private static void checkRoom(Path out, ModelConfig cfg, TensorType type) {
        double bytes = (double) cfg.parameterCount() * type.rowBytes(type.blockValues()) / type.blockValues();
        Path dir = out.toAbsolutePath().getParent();
        long free;
        try {
            free = java.nio.file.Files.getFileStore(dir).getUsableSpace();
        } catch (java.io.IOException e) {
            return; // the write itself will say what is wrong with the directory
        }
        if (bytes > free) {
            throw new BadInputException(String.format(java.util.Locale.ROOT,
                    "make-model %s: the model needs %s and %s has %s free", out, size(bytes), dir, size(free)));
        }
    }

    private static TensorType tensorType(String name) {
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "f32" -> TensorType.F32;
            case "f16" -> TensorType.F16;
            case "bf16" -> TensorType.BF16;
            case "q8_0" -> TensorType.Q8_0;
            case "q4_0" -> TensorType.Q4_0;
            default -> throw new BadInputException("--type must be f32, f16, bf16, q8_0 or q4_0, got '" + name + "'");
        };
    }

    /** Bytes with one decimal in GB, MB or kB, whichever is at least 1 ({@code 2.4 GB}, {@code 98.3 kB}), so a small figure never reads 0.0 GB. */
    static String size(double bytes) {
        double b = bytes;
        return b >= 1e9 ? String.format(java.util.Locale.ROOT, "%.1f GB", b / 1e9)
                : b >= 1e6 ? String.format(java.util.Locale.ROOT, "%.1f MB", b / 1e6)
                : String.format(java.util.Locale.ROOT, "%.1f kB", b / 1e3);
    }
}
