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
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * SETs sent through Lettuce as one batch: a standalone store's writes ({@link LettuceRemoteStore#setAll}),
 * but for large values on plain TCP ({@link RespSetConnection}).
 */
final class LettuceSetBatch {

    private LettuceSetBatch() {
    }

    /** A store's guard of one command on {@code key}: through its node's breaker ({@code LettuceRemoteStore.guarded}). */
    interface Guard {
        CompletableFuture<Void> guarded(String key, Supplier<CompletionStage<Void>> op);
    }

    /**
     * SET {@code keys[i] values[i]} on {@code c}, each through {@code guard} as a single SET goes, and
     * those it lets through dispatched as one batch; a value above {@code limit} is refused unsent.
     *
     * @return each SET's answer, in order
     */
    static List<CompletableFuture<Void>> send(StatefulConnection<String, byte[]> c, RedisCodec<String, byte[]> codec, SetArgs setArgs,
                                              ValueLimit limit, List<String> keys, List<byte[]> values, Guard guard) {
        List<String> sentKeys = new ArrayList<>(keys.size());
        List<byte[]> sentValues = new ArrayList<>(keys.size());
        List<CompletableFuture<Void>> sent = new ArrayList<>(keys.size());
        List<CompletableFuture<Void>> answers = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            byte[] value = values.get(i);
            if (value.length > limit.bytes()) {
                answers.add(limit.tooLarge(value.length));
                continue;
            }
            CompletableFuture<Void> answer = new CompletableFuture<>();
            answers.add(guard.guarded(key, () -> {
                sentKeys.add(key);   // only the commands the breaker lets through are sent
                sentValues.add(value);
                sent.add(answer);
                return answer;
            }));
        }
        if (!sent.isEmpty()) {
            dispatch(c, codec, setArgs, sentKeys, sentValues, sent);
        }
        return answers;
    }

    /**
     * Dispatches SET {@code keys[i] values[i]} (with {@code setArgs}, if any) on {@code c} as one
     * batch, which Lettuce encodes into one buffer and flushes once; each command completes
     * {@code answers[i]}. A dispatch that throws fails them all.
     */
    private static void dispatch(StatefulConnection<String, byte[]> c, RedisCodec<String, byte[]> codec, SetArgs setArgs, List<String> keys,
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
