package io.kvtier.replay;

import java.util.Locale;

/**
 * A device tier of fewer blocks than the trace's longest request needs. Its message names the tier
 * as {@code --device-tokens}; {@link #ofDefault} says it for a tier the user did not size (the mode's
 * default), so the line names no flag that was not given. Both end with a value that fits, ungrouped
 * so that it can be typed back.
 */
public final class DeviceTierTooSmallException extends IllegalArgumentException {

    private final Capacity device;
    private final long blocks;
    private final int blockSize;
    private final int needed;

    DeviceTierTooSmallException(Capacity device, long blocks, int blockSize, int needed) {
        super(String.format(Locale.ROOT, "--device-tokens %s holds %s of %,d tokens, but the trace's longest request needs "
                + "%,d (%,d tokens); give --device-tokens %d or more, or min", device, io.kvtier.text.Plural.grouped(blocks, "block"),
                blockSize, needed, (long) needed * blockSize, (long) needed * blockSize));
        this.device = device;
        this.blocks = blocks;
        this.blockSize = blockSize;
        this.needed = needed;
    }

    /** The line for a device tier of the mode's default size: the flag that sizes it is advised, not named as given. */
    public String ofDefault() {
        return String.format(Locale.ROOT, "the default device tier (%s tokens, %s of %,d tokens) is smaller than the trace's "
                + "longest request needs (%,d blocks, %,d tokens); give --device-tokens %d or more, or min",
                device, io.kvtier.text.Plural.grouped(blocks, "block"), blockSize, needed, (long) needed * blockSize,
                (long) needed * blockSize);
    }
}
