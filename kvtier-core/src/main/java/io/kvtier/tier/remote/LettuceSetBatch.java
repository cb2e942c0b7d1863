package io.kvtier.tier.remote;

import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.RedisCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** SETs sent through Lettuce as one batch: a TLS store's writes ({@link LettuceRemoteStore#setAll}). */
final class LettuceSetBatch {

    private LettuceSetBatch() {
    }

    /**
     * Dispatches SET {@code keys[i] values[i]} (with {@code setArgs}, if any) on {@code c} as one
     * batch, which Lettuce encodes into one buffer and flushes once; each command completes
     * {@code answers[i]}. A dispatch that throws fails them all.
     */
    static void dispatch(StatefulConnection<String, byte[]> c, RedisCodec<String, byte[]> codec, SetArgs setArgs, List<String> keys,
                         List<byte[]> values, List<CompletableFuture<Void>> answers) {
        List<RedisCommand<String, byte[], ?>> batch = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            CommandArgs<String, byte[]> args = new CommandArgs<>(codec).addKey(keys.get(i)).addValue(values.get(i));
            if (setArgs != null) {
                setArgs.build(args);
            }
            AsyncCommand<String, byte[], String> set = new AsyncCommand<>(new Command<>(CommandType.SET, new StatusOutput<>(codec), args));
            CompletableFuture<Void> answer = answers.get(i);
            set.whenComplete((ok, err) -> {
                if (err != null) {
                    answer.completeExceptionally(err);
                } else {
                    answer.complete(null);
                }
            });
            batch.add(set);
        }
        try {
            c.dispatch(batch);
        } catch (RuntimeException e) {
            batch.forEach(cmd -> cmd.completeExceptionally(e));
        }
    }
}
