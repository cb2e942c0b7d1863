package io.kvtier.model;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;

/**
 * Writes llama2.c checkpoints with random weights, for tests and benchmarks of model shapes
 * whose trained weights are not at hand. Streams through a 1 MiB buffer, so a 110M-parameter
 * model (440 MB) is written without holding it in the heap.
 */
public final class CheckpointWriter {

    /** Standard deviation of random weights, as GPT-2/Llama initialisation. */
    static final double WEIGHT_STD = 0.02;

    private CheckpointWriter() {
    }

    /**
     * Writes a checkpoint of shape {@code cfg} to {@code out} (replacing it): matrices ~ N(0, 0.02),
     * RMS weights 1.0, the legacy RoPE tables filled as llama2.c's export does (cos / sin of
     * {@code pos * 10000^(-2i/headDim)}), the classifier only when not shared. Same {@code seed},
     * same bytes. Written to a temporary file beside {@code out}, then renamed over it: a reader
     * of {@code out} sees the old file or the whole new one, never a truncated one, and a failed
     * write leaves {@code out} as it was.
     *
     * @throws UncheckedIOException when the file cannot be written
     */
    public static void writeRandom(Path out, ModelConfig cfg, long seed) {
        Path abs = out.toAbsolutePath();
        Path tmp = abs.resolveSibling("." + abs.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        try {
            writeRandomTo(tmp, cfg, seed);
            java.nio.file.Files.move(tmp, abs, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write checkpoint " + out, e);
        } finally {
            try {
                java.nio.file.Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // best effort: only left when the write itself failed
            }
        }
    }

    private static void writeRandomTo(Path out, ModelConfig cfg, long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        CheckpointLayout layout = CheckpointLayout.of(cfg);
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
             Sink sink = new Sink(ch)) {
            sink.putInt(cfg.dim());
            sink.putInt(cfg.hiddenDim());
            sink.putInt(cfg.layers());
            sink.putInt(cfg.heads());
            sink.putInt(cfg.kvHeads());
            sink.putInt(cfg.sharedClassifier() ? cfg.vocabSize() : -cfg.vocabSize());
            sink.putInt(cfg.seqLen());
            for (CheckpointLayout.Tensor t : layout.tensors()) {
                long floats = t.count() * t.floatsEach();
                switch (t.name()) {
                    case "rms_att_weight", "rms_ffn_weight", "rms_final_weight" -> {
                        for (long i = 0; i < floats; i++) sink.putFloat(1.0f);
                    }
                    case "freq_cis_real", "freq_cis_imag" -> writeRopeTable(sink, cfg, t.name().endsWith("real"));
                    default -> {
                        for (long i = 0; i < floats; i++) sink.putFloat((float) (random.nextGaussian() * WEIGHT_STD));
                    }
                }
            }
        }
    }

    private static void writeRopeTable(Sink sink, ModelConfig cfg, boolean real) throws IOException {
        int half = cfg.headDim() / 2;
        for (int pos = 0; pos < cfg.seqLen(); pos++) {
            for (int i = 0; i < half; i++) {
                double freq = 1.0 / Math.pow(10000.0, (2.0 * i) / cfg.headDim());
                sink.putFloat((float) (real ? Math.cos(pos * freq) : Math.sin(pos * freq)));
            }
        }
    }

    /** Little-endian buffered writer over a channel. */
    private static final class Sink implements AutoCloseable {
        private final FileChannel ch;
        private final ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);

        Sink(FileChannel ch) {
            this.ch = ch;
        }

        void putInt(int v) throws IOException {
            ensure(Integer.BYTES);
            buf.putInt(v);
        }

        void putFloat(float v) throws IOException {
            ensure(Float.BYTES);
            buf.putFloat(v);
        }

        private void ensure(int bytes) throws IOException {
            if (buf.remaining() < bytes) {
                flush();
            }
        }

        private void flush() throws IOException {
            buf.flip();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            buf.clear();
        }

        @Override
        public void close() throws IOException {
            flush();
        }
    }
}
