package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compiler directives the launcher gives {@code generate} (resource {@code jit/generate-directives.json}):
 * the JVM reads them, they keep C2 off the Vector API's fallbacks and the start-up-only code, and
 * none matches a method that C2 must inline for the Vector API's intrinsics (a directive that
 * excludes a method from C2 also stops C2 inlining it, and the kernels would box every vector);
 * C2's compiles of the compute pool's hand-off code call the range tasks instead of inlining them,
 * and inline everything else as before.
 */
class GenerateDirectivesTest {

    private static final String RESOURCE = "/jit/generate-directives.json";

    @Test
    void theJvmReadsTheFileAsTwoDirectives(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("directives.json");
        Files.writeString(file, text());
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UnlockDiagnosticVMOptions", "-XX:CompilerDirectivesFile=" + file, "-version")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        // A syntax error is only a message: the JVM then runs without the directives.
        assertThat(out).contains("2 compiler directives added").doesNotContainIgnoringCase("error");
        assertThat(p.exitValue()).isZero();
    }

    @Test
    void theVectorApisFallbacksAndStartUpCodeAreMatched() throws IOException {
        List<String> patterns = patterns();
        for (String method : List.of(
                "jdk/incubator/vector/FloatVector.tOpTemplate",
                "jdk/incubator/vector/FloatVector.bOpTemplate",
                "jdk/incubator/vector/FloatVector.ldLongOp",
                "jdk/incubator/vector/FloatVector.lambda$ternaryOperations$0",
                "jdk/incubator/vector/FloatVector$$Lambda/0x000000007a0112e0.apply",
                "jdk/incubator/vector/FloatVector$FloatSpecies.rvOp",
                "jdk/incubator/vector/Float512Vector.tOp",
                "jdk/internal/classfile/impl/StackMapGenerator.processBlock",
                "io/kvtier/model/CheckpointWriter.writeRandomTo",
                "io/kvtier/model/CheckpointWriter$Sink.putFloat",
                "picocli/CommandLine$Model$Interpolator.findOpeningDollar",
                "java/lang/reflect/AccessibleObject.isAnnotationPresent",
                "java/lang/reflect/Method.getAnnotation",
                "sun/reflect/annotation/AnnotationInvocationHandler.invoke")) {
            assertThat(patterns).as(method).anyMatch(p -> matches(p, method));
        }
    }

    @Test
    void noPatternMatchesAMethodOnAnIntrinsicsInlinedPathOrAKernel() throws IOException {
        List<String> patterns = patterns();
        for (String method : List.of(
                "jdk/incubator/vector/FloatVector.fma",
                "jdk/incubator/vector/FloatVector.lanewiseTemplate",
                "jdk/incubator/vector/FloatVector.fromArray",
                "jdk/incubator/vector/FloatVector.fromArray0Template",
                "jdk/incubator/vector/FloatVector.fromMemorySegment",
                "jdk/incubator/vector/FloatVector.fromMemorySegment0Template",
                "jdk/incubator/vector/FloatVector.reduceLanesTemplate",
                "jdk/incubator/vector/FloatVector.intoArray",
                "jdk/incubator/vector/FloatVector.add",
                "jdk/incubator/vector/FloatVector.zero",
                "jdk/incubator/vector/Float512Vector.lanewise",
                "jdk/incubator/vector/Float512Vector.reduceLanes",
                "jdk/incubator/vector/Float256Vector.fromMemorySegment0",
                "jdk/incubator/vector/AbstractVector.check",
                "jdk/internal/vm/vector/VectorSupport.ternaryOp",
                "jdk/internal/vm/vector/VectorSupport.load",
                "jdk/internal/misc/ScopedMemoryAccess.loadFromMemorySegment",
                "io/kvtier/model/VectorKernels.rows4",
                "io/kvtier/model/VectorKernels.tile4x4",
                "io/kvtier/model/Transformer$$Lambda/0x000000009107fd10.run",
                "io/kvtier/model/PagedAttention.attend",
                "java/lang/reflect/Array.newInstance",
                "java/util/HashMap.putVal")) {
            assertThat(patterns).as(method).noneMatch(p -> matches(p, method));
        }
    }

    @Test
    void theHandOffCodeCallsTheRangeTasksAndInlinesTheRest() throws IOException {
        String handOff = directives()[1];
        assertThat(handOff).doesNotContain("Exclude");
        String matchPart = handOff.substring(0, handOff.indexOf("c2:"));
        String inlinePart = handOff.substring(handOff.indexOf("inline:"));
        List<String> matched = quoted(matchPart);
        List<String> notInlined = quoted(inlinePart).stream()
                .peek(p -> assertThat(p).as("a don't-inline pattern").startsWith("-"))
                .map(p -> p.substring(1)).toList();
        for (String method : List.of("io/kvtier/model/Parallel.helperLoop", "io/kvtier/model/Parallel.forRange",
                "io/kvtier/model/Parallel$Job.work")) {
            assertThat(matched).as(method).anyMatch(p -> matches(p, method));
        }
        assertThat(matched).as("the tasks' own compiles keep their inlining")
                .noneMatch(p -> matches(p, "io/kvtier/model/Transformer.matmuls"))
                .noneMatch(p -> matches(p, "io/kvtier/model/Transformer.lambda$matmuls$0"));
        for (String task : List.of("io/kvtier/model/Transformer$$Lambda/0x000000009107fd10.run",
                "io/kvtier/model/Transformer.lambda$attentionByKvHead$0", "io/kvtier/model/Transformer.lambda$matmuls$0",
                "io/kvtier/model/RowReader$$Lambda/0x0000000012345678.run")) {
            assertThat(notInlined).as(task).anyMatch(p -> matches(p, task));
        }
        for (String inlined : List.of("io/kvtier/model/Parallel$Job.work", "io/kvtier/model/VectorKernels.rows4",
                "io/kvtier/model/PagedAttention.attend", "java/util/concurrent/atomic/AtomicInteger.getAndIncrement",
                "jdk/incubator/vector/FloatVector.fma")) {
            assertThat(notInlined).as(inlined).noneMatch(p -> matches(p, inlined));
        }
    }

    /** HotSpot's method pattern "pkg/Class.method": a '*' may start or end the class and the method part. */
    static boolean matches(String pattern, String method) {
        int dot = pattern.lastIndexOf('.');
        int mdot = method.lastIndexOf('.');
        return part(pattern.substring(0, dot), method.substring(0, mdot))
                && part(pattern.substring(dot + 1), method.substring(mdot + 1));
    }

    private static boolean part(String pattern, String name) {
        boolean head = pattern.startsWith("*"), tail = pattern.endsWith("*") && pattern.length() > 1;
        String core = pattern.substring(head ? 1 : 0, pattern.length() - (tail ? 1 : 0));
        if (pattern.equals("*")) {
            return true;
        }
        return head && tail ? name.contains(core) : head ? name.endsWith(core) : tail ? name.startsWith(core) : name.equals(core);
    }

    /** The method patterns of the exclusion directive (the first). */
    private static List<String> patterns() throws IOException {
        List<String> out = quoted(directives()[0]);
        assertThat(directives()[0]).contains("Exclude: true");
        assertThat(out).hasSizeGreaterThan(10);
        return out;
    }

    /** The directives' texts without comments, in file order (split at each top-level "match:"). */
    private static String[] directives() throws IOException {
        String text = text().replaceAll("(?m)//.*$", "");
        String[] parts = text.split("match:");
        assertThat(parts).hasSize(3); // what precedes the first, then one per directive
        return java.util.Arrays.copyOfRange(parts, 1, parts.length);
    }

    private static List<String> quoted(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"([^\"]+)\"").matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static String text() throws IOException {
        try (InputStream in = GenerateDirectivesTest.class.getResourceAsStream(RESOURCE)) {
            assertThat(in).as(RESOURCE).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
