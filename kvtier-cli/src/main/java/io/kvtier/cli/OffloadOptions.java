package io.kvtier.cli;

import io.kvtier.engine.OffloadSetup;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.replay.Policy;
import io.kvtier.text.Plural;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The host tier of the real engine: {@code --host-cache-bytes}, {@code --host-cache-chunks},
 * {@code --blocks-per-chunk}, {@code --offload-decode}. With {@link EvictionOptions} and
 * {@link DiskOptions} it gives the engine's {@link OffloadSetup}.
 */
public final class OffloadOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--host-cache-bytes", defaultValue = "256M", paramLabel = "SIZE",
            description = "host-memory KV tier size in bytes, e.g. 256M, 1.5G, 1GiB (K/M/G/T and Ki/Mi/Gi/Ti are powers of 1024; "
                    + "default ${DEFAULT-VALUE}); 0 turns offloading off")
    String hostCacheBytes;

    @Option(names = "--host-cache-chunks", paramLabel = "N", description = "host tier size in chunks instead of --host-cache-bytes")
    Integer hostCacheChunks;

    @Option(names = "--blocks-per-chunk", defaultValue = "1", paramLabel = "N",
            description = "device blocks per stored chunk (default ${DEFAULT-VALUE})")
    int blocksPerChunk;

    @Option(names = "--offload-decode", description = "store blocks completed during decode too (default: blocks holding prompt tokens)")
    boolean offloadDecode;

    @Option(names = "--prefill-priority", paramLabel = "on|off",
            description = "on: a new request's prefill may preempt running requests that have their first token (they "
                    + "load their KV back from the host tier), so its first token does not wait for their decodes; "
                    + "lower time to first token, longer gaps between the preempted requests' tokens. "
                    + "Default: on with the host tier (preempted requests resume by loading), off without it "
                    + "(they would recompute everything); on needs the host tier")
    String prefillPriority;

    /**
     * {@code --prefill-priority}: the value given, or by default whether the host tier is on. After
     * {@link #setup}, which refuses {@code on} without the host tier.
     *
     * @param hostOn whether the host tier is on ({@link OffloadSetup#enabled()})
     * @throws BadInputException for a value other than on/off
     */
    public boolean prefillPriority(boolean hostOn) {
        Boolean given = prefillGiven();
        return given == null ? defaultPrefillPriority(hostOn) : given;
    }

    /**
     * {@code --prefill-priority} left out: on with the host tier (a preempted request loads its KV
     * back), off without it (it would recompute everything). Also the warm-up's engines' setting.
     */
    static boolean defaultPrefillPriority(boolean hostOn) {
        return hostOn;
    }

    /** {@code --prefill-priority} as given, null when left out; a value other than on/off is refused. */
    private Boolean prefillGiven() {
        if (prefillPriority == null) {
            return null;
        }
        return switch (prefillPriority.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new BadInputException("--prefill-priority must be on or off, got '" + prefillPriority + "'");
        };
    }

    /** Device blocks per stored chunk, at least 1. */
    public int blocksPerChunk() {
        return Checks.atLeast(blocksPerChunk, 1, "--blocks-per-chunk");
    }

    /** The flags {@link #setup} refuses without the host tier (each "needs the host tier"). */
    private static final String[] NEED_HOST = {"--disk-cache-dir", "--eviction", "--blocks-per-chunk", "--offload-decode",
        "--store-policy", "--store-horizon", "--load-policy"};

    /**
     * A host hit must be possible where a host tier stores chunks: a hit reuses whole chunks and
     * leaves at least one prompt token to compute, and a prompt fits the model's context
     * ({@code contextTokens}), so a chunk is at most {@code contextTokens - 1} tokens. Without the tier
     * there is nothing to check. A default block size is lowered to the largest power of two that fits
     * (at least 1); a value the user gave is refused, the line naming only the flags given and
     * advising only what those flags allow. A context too short for any chunk (1 token) is refused
     * where a flag given asks for the host tier, and runs with blocks of 1 token where none does (the
     * default tier, which cannot hit). The rule of generate and serve.
     *
     * @param hostOn whether the host tier is on ({@link OffloadSetup#enabled()})
     * @throws BadInputException when the flags given make a chunk too long for a hit, or ask for a
     *         host tier that cannot hit
     */
    public void fitChunk(BatchOptions batch, boolean hostOn, int contextTokens) {
        fitChunk(batch, hostOn, contextTokens, true);
    }

    /**
     * {@link #fitChunk(BatchOptions, boolean, int)} for a command that may need the host tier
     * ({@code mayTurnOff} false: bench serve's 'on' side), whose refusal then does not advise turning it off.
     */
    public void fitChunk(BatchOptions batch, boolean hostOn, int contextTokens, boolean mayTurnOff) {
        int perChunk = blocksPerChunk();
        int bs = batch.blockSize();
        int room = contextTokens - 1;
        if (!hostOn || (long) perChunk * bs <= room) {
            return;
        }
        var parsed = mixee == null ? null : mixee.commandLine().getParseResult();
        boolean perChunkGiven = parsed != null && parsed.hasMatchedOption("--blocks-per-chunk");
        boolean sizeGiven = batch.blockSizeGiven();
        String context = Plural.count(contextTokens, "token");
        String why = "a hit reuses whole chunks and leaves at least one prompt token to compute, so ";
        String off = mayTurnOff && mayTurnOff(parsed) ? "give --host-cache-bytes 0" : null;
        if (!sizeGiven && (perChunk <= room || !perChunkGiven)) { // the default block size is ours to lower
            String asking = perChunk <= room ? null : hostAskedBy(parsed);
            if (asking != null) { // blocks of 1 token would still leave no hit: the flag asked for nothing it can have
                String flag = asking.split(" ")[0];
                throw new BadInputException(asking + " asks for the host tier, but the model's context of " + context
                        + " leaves no room for a host hit: " + why + "no chunk fits"
                        + remedies(flag.equals("--host-cache-bytes") ? null : "leave out " + flag, off)); // its default is no flag
            }
            batch.lowerDefaultBlockSize(Math.max(1, Integer.highestOneBit(Math.max(0, room) / perChunk)));
            return;
        }
        // The flags given, as the line names them and as it says to leave them out (one at least is given here).
        String what = !sizeGiven ? "--blocks-per-chunk " + perChunk + " (blocks of at least 1 token)"
                : perChunkGiven ? "--blocks-per-chunk " + perChunk + " x --block-size " + bs : "--block-size " + bs;
        String given = !sizeGiven ? "--blocks-per-chunk" : perChunkGiven ? "--block-size and --blocks-per-chunk" : "--block-size";
        String leadIn = what + " leaves no room for a host hit in the model's context of " + context + ": " + why;
        if (room < 1) { // no chunk of any size: a smaller value is no advice, leaving the flags given out is
            throw new BadInputException(leadIn + "no chunk fits a context of " + context + " (no hit is possible)"
                    + remedies("leave out " + given, off));
        }
        List<String> smaller = new java.util.ArrayList<>();
        if (sizeGiven && room / perChunk >= 1) { // blocks of room / perChunk tokens fit
            smaller.add("--block-size");
        }
        if (perChunkGiven && perChunk > 1) { // fewer blocks of this size may fit
            smaller.add("--blocks-per-chunk");
        }
        throw new BadInputException(leadIn + "a chunk must be at most " + Plural.count(room, "token")
                + remedies(smaller.isEmpty() ? null : "give a smaller " + String.join(" or ", smaller), off));
    }

    /**
     * "; A, or B" for the remedies given (nulls skipped), "" for none; a verb a remedy shares with the
     * one before it is said once ("give a smaller --block-size, or --host-cache-bytes 0").
     */
    private static String remedies(String... options) {
        StringBuilder out = new StringBuilder();
        String verb = null;
        for (String o : options) {
            if (o == null) {
                continue;
            }
            String v = o.substring(0, o.indexOf(' ') + 1);
            out.append(out.isEmpty() ? "; " : ", or ").append(v.equals(verb) ? o.substring(v.length()) : o);
            verb = v;
        }
        return out.toString();
    }

    /** Whether {@code --host-cache-bytes 0} would be accepted with the flags given: {@link #hostNeed} has none for it. */
    private boolean mayTurnOff(picocli.CommandLine.ParseResult parsed) {
        return hostNeed(parsed, true, false) == null;
    }

    /**
     * A flag given that asks for the host tier, as a refusal names it ({@code --host-cache-bytes 1G},
     * {@code --eviction}), or null: the tier is the default's. A value given that is the default's
     * asks for nothing more than leaving the flag out.
     */
    private String hostAskedBy(picocli.CommandLine.ParseResult parsed) {
        if (parsed == null) {
            return null;
        }
        if (Checks.givenOtherThanDefault(parsed, "--host-cache-bytes")) {
            return "--host-cache-bytes " + hostCacheBytes;
        }
        HostNeed need = hostNeed(parsed, true, false);
        return need == null ? null : need.flag();
    }

    /** A flag given that needs the host tier, as its refusal names it, and that refusal's line. */
    private record HostNeed(String flag, String line) {
    }

    /**
     * The refusal of the host tier's flags as given, or null: {@code --host-cache-bytes} beside
     * {@code --host-cache-chunks}, and without the host tier ({@code hostOn} false) a flag that needs it.
     * {@link #setup} refuses through it, and {@link #fitChunk} asks it of {@code --host-cache-bytes 0}
     * before advising that, so the advice and the refusals cannot drift apart.
     *
     * @param bytesGiven whether {@code --host-cache-bytes} is given
     */
    private HostNeed hostNeed(picocli.CommandLine.ParseResult parsed, boolean bytesGiven, boolean hostOn) {
        if (hostCacheChunks != null && bytesGiven) {
            return new HostNeed("--host-cache-chunks", "give --host-cache-bytes or --host-cache-chunks, not both");
        }
        if (hostOn) {
            return null;
        }
        if (Boolean.TRUE.equals(prefillGiven())) {
            // off is what the command does without the tier anyway; on would preempt into recomputes.
            return new HostNeed("--prefill-priority on", "--prefill-priority on needs the host tier (--host-cache-bytes > 0)");
        }
        if (parsed == null) {
            return null;
        }
        for (String flag : NEED_HOST) {
            if (Checks.givenOtherThanDefault(parsed, flag)) {
                return new HostNeed(flag, flag + " needs the host tier (--host-cache-bytes > 0)");
            }
        }
        if (parsed.hasMatchedOption("--remote-url")) { // RemoteOptions' flag, in generate and serve
            return new HostNeed("--remote-url", "--remote-url needs the host tier: the remote tier sits behind it (--host-cache-bytes > 0)");
        }
        return null;
    }

    /** Checks the values that do not depend on the model (before anything is loaded). */
    public void check(EvictionOptions eviction, DiskOptions disk) {
        setup(eviction, disk, false);
    }

    /**
     * The tiers to build: the host tier (off when its size is 0) and the disk tier behind it.
     *
     * @param terminal whether the disk scan may draw a progress line on stderr
     * @throws BadInputException naming the flag of a bad value or combination
     */
    public OffloadSetup setup(EvictionOptions eviction, DiskOptions disk, boolean terminal) {
        long bytes = Sizes.parseBytes(hostCacheBytes, "--host-cache-bytes");
        hostCacheChunks = Deprecations.zeroMeansDefault(hostCacheChunks, "--host-cache-chunks"); // noted once
        Integer chunks = hostCacheChunks;
        if (chunks != null) {
            Checks.atLeast(chunks, 1, "--host-cache-chunks");
        }
        Policy policy = eviction.policy();
        OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk()).withOffloadPromptOnly(!offloadDecode)
                .withHostAdmitAfter(policy.admitAfter()).withStorePolicy(eviction.storePolicy())
                .withLoadPolicy(eviction.loadPolicy());
        prefillGiven();
        OffloadSetup.DiskSetup diskSetup = disk.setup(terminal);
        var parsed = mixee == null ? null : mixee.commandLine().getParseResult();
        boolean hostOn = chunks != null || bytes > 0;
        HostNeed refused = hostNeed(parsed, parsed != null && parsed.hasMatchedOption("--host-cache-bytes"), hostOn);
        if (refused != null) {
            throw new BadInputException(refused.line());
        }
        return new OffloadSetup(chunks != null ? 0 : bytes, chunks != null ? chunks : 0, policy.evictionPolicy(), oc, diskSetup);
    }

    /**
     * Refuses {@code setup} for {@code model} before the model loads when the file's header shows
     * several KV groups and the setup cannot serve them (a lazy store policy): one line, not a load of
     * many GB first. The engine refuses the same after loading when the header could not tell.
     */
    static void checkKvGroups(io.kvtier.engine.OffloadSetup setup, java.nio.file.Path model) {
        if (setup.refusesKvGroups() && io.kvtier.model.Models.kvGroupCountFromHeader(model) > 1) {
            throw new BadInputException(io.kvtier.engine.OffloadSetup.LAZY_WITH_GROUPS);
        }
    }
}
