package io.kvtier.cli;

import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.ModelConfig;
import io.kvtier.tier.disk.FileTrees;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;

/**
 * {@code ./kvtier aot-training} (hidden): the representative run the launcher trains the JVM's
 * AOT cache with (JEP 483/514/515: loaded and linked classes, method profiles). It writes a
 * random model of stories260K's shape and a 512-piece tokenizer to a temporary directory and
 * runs {@code generate} on them as a user would (one prompt streamed as text, then several
 * batched as JSON lines, and once with a remote tier whose port refuses), with the output
 * discarded; so it needs no file of the user's and no server.
 */
@Command(name = "aot-training", hidden = true, description = "the launcher's AOT cache training run (internal)")
final class AotTrainingCommand implements Callable<Integer> {

    /** stories260K: dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, vocab 512, 512 positions. */
    static final ModelConfig SHAPE = new ModelConfig(64, 172, 5, 8, 4, 512, 512, true);

    @Override
    public Integer call() throws IOException {
        Path dir = Files.createTempDirectory("kvtier-aot-training");
        PrintStream out = System.out;
        try {
            Path model = dir.resolve("model.bin");
            Path tok = dir.resolve("tok.bin");
            CheckpointWriter.writeRandom(model, SHAPE, 1);
            Files.write(tok, tokenizer(SHAPE.vocabSize()));
            System.setOut(new PrintStream(OutputStream.nullOutputStream(), false, StandardCharsets.UTF_8));
            String[] common = {"--model", model.toString(), "--tokenizer", tok.toString(), "--host-cache-bytes", "16M"};
            // The remote tier's client (Lettuce, Netty, Reactor: some two thousand classes) against a
            // port nothing listens on: the connection is refused at once, so no server is needed,
            // and the client's classes and its failure path are in the cache.
            check(Main.run(concat(new String[] {"generate", "--prompt", "Once upon a time", "--max-tokens", "32",
                    "--remote-url", "redis://127.0.0.1:" + closedPort()}, common)));
            for (int round = 0; round < 3; round++) {
                check(Main.run(concat(new String[] {"generate", "--prompt", "Once upon a time", "--max-tokens", "256"}, common)));
                check(Main.run(concat(new String[] {"generate", "--prompt", "Once upon a time", "--prompt", "The cat sat",
                        "--prompt", "One day", "--max-tokens", "128", "--output", "jsonl"}, common)));
            }
            return 0;
        } finally {
            System.setOut(out);
            FileTrees.delete(dir);
        }
    }

    /** A loopback port that was free a moment ago (bound, then closed): a connection to it is refused. */
    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void check(int code) {
        if (code != 0) {
            throw new IllegalStateException("the AOT training run's generate exited with " + code);
        }
    }

    private static String[] concat(String[] a, String[] b) {
        return Stream.concat(Stream.of(a), Stream.of(b)).toArray(String[]::new);
    }

    /**
     * A llama2.c tokenizer of {@code vocab} pieces: {@code <unk>}, BOS, EOS, the 256 byte pieces,
     * then the letters, space and letter pairs (with merge scores), so that text tokenizes through
     * merges as with a trained vocabulary.
     */
    static byte[] tokenizer(int vocab) {
        ByteArrayOutputStream pieces = new ByteArrayOutputStream();
        String[] special = {"<unk>", "<s>", "</s>"};
        int n = 0;
        for (String s : special) {
            piece(pieces, s, 0f);
            n++;
        }
        for (int b = 0; b < 256; b++, n++) {
            piece(pieces, String.format("<0x%02X>", b), 0f);
        }
        String letters = " abcdefghijklmnopqrstuvwxyzTO";
        for (int i = 0; i < letters.length() && n < vocab; i++, n++) {
            piece(pieces, String.valueOf(letters.charAt(i)), -i);
        }
        for (int i = 0; i < letters.length() && n < vocab; i++) {
            for (int j = 0; j < letters.length() && n < vocab; j++, n++) {
                piece(pieces, "" + letters.charAt(i) + letters.charAt(j), -100 - i * letters.length() - j);
            }
        }
        ByteBuffer head = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(8);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(head.array());
        all.writeBytes(pieces.toByteArray());
        return all.toByteArray();
    }

    private static void piece(ByteArrayOutputStream out, String text, float score) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(ByteBuffer.allocate(8 + b.length).order(ByteOrder.LITTLE_ENDIAN).putFloat(score).putInt(b.length).put(b).array());
    }
}
