package io.kvtier.cli;

import java.util.Map;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command's own defaults for options it shares through a mixin ({@code --block-size} is 16 in
 * {@code generate} and 512 in {@code replay}): one declaration, one meaning, per-command
 * defaults that {@code --help} shows as {@code ${DEFAULT-VALUE}}. A subclass per command passes
 * its map (picocli instantiates providers by their no-argument constructor).
 */
public abstract class FlagDefaults implements IDefaultValueProvider {

    private final Map<String, String> byFlag;

    protected FlagDefaults(Map<String, String> byFlag) {
        this.byFlag = Map.copyOf(byFlag);
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        return arg instanceof OptionSpec o ? byFlag.get(o.longestName()) : null;
    }
}
