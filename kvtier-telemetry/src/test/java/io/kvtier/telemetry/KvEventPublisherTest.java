package io.kvtier.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.KvEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The ZMQ side, as a router sees it: batches arrive on the PUB socket as
 * {@code [topic, 8-byte sequence, payload]} with sequence numbers 0, 1, 2, ... and no gap; the
 * replay socket re-sends every buffered batch from any sequence number (then the end marker), and
 * the batches before it plus the replay rebuild the same key set as the whole stream; the replay
 * buffer is bounded.
 */
class KvEventPublisherTest {

    private static final BlockKey SEED = new BlockKey(0, 0, 0, 0);
    private static final long SEED_OF_EVENTS = 20261201L;

    /** One published batch as received. */
    record Frame(long seq, byte[] payload) {
    }

    @Test
    void sequenceNumbersHaveNoGapsAndReplayFromAnyPointRebuildsTheSameKeys() throws Exception {
        List<List<KvEvent>> batches = randomBatches(100, new SplittableRandom(SEED_OF_EVENTS));
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 16, KvEventEncoder.HashFormat.INT, 0);
        try (KvEventPublisher pub = new KvEventPublisher(new KvEventPublisher.Config("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", "kv@test"), enc);
             ZContext ctx = new ZContext()) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.subscribe("kv@test".getBytes(StandardCharsets.UTF_8));
            // The subscriber's socket events with their times, printed if the join is slow: they
            // tell which phase took the time (connect, retries, handshake) on a machine where it happens.
            JoinWatch watch = new JoinWatch(ctx, sub);
            sub.connect(pub.endpoint());
            // A PUB socket drops what it sends until the subscription has come through the TCP
            // connect, the ZMTP handshake and the PUB's next send (ZMQ's slow joiner; under load
            // that took over a second after the TCP connect and all batches were gone). No socket
            // event says when it has: like a router, the subscriber has joined when a batch arrives,
            // and the replay fills in what came before. Batches go out one at a time until then.
            // Up to 99 tries of 500 ms: a join took all of 80 × 200 ms once on an idle machine.
            sub.setReceiveTimeOut(500);
            List<Frame> live = new ArrayList<>();
            int sent = 0;
            while (live.isEmpty()) {
                assertThat(sent).as("batches sent before the subscriber joined; its socket events: %s", watch.events())
                        .isLessThan(batches.size() - 1);
                pub.publish(batches.get(sent++));
                List<byte[]> msg = EventWire.recv(sub);
                if (msg != null) {
                    live.add(frame(msg));
                }
            }
            watch.close();
            if (watch.elapsedMillis() > 5_000) {
                System.err.printf("KvEventPublisherTest: the subscriber joined after %d ms; its socket events: %s%n",
                        watch.elapsedMillis(), watch.events());
            }
            for (List<KvEvent> b : batches.subList(sent, batches.size())) {
                pub.publish(b);
            }
            pub.publish(List.of()); // sends nothing
            sub.setReceiveTimeOut(60_000);
            while (live.getLast().seq() < batches.size() - 1) {
                List<byte[]> msg = EventWire.recv(sub);
                assertThat(msg).as("the next batch within 60 s after " + live.getLast().seq()).isNotNull();
                live.add(frame(msg));
            }
            for (int i = 1; i < live.size(); i++) {
                assertThat(live.get(i).seq()).as("sequence after " + live.get(i - 1).seq()).isEqualTo(live.get(i - 1).seq() + 1);
            }
            assertThat(live.size()).as("live batches from the first received to the last").isGreaterThanOrEqualTo(batches.size() - sent + 1);
            // The publishing thread counts a batch after its send returns, and the subscriber may
            // read the last batch before that: wait for the count (at most 60 s), then require it exact.
            for (long deadline = System.nanoTime() + 60_000_000_000L;
                    pub.published() < batches.size() && System.nanoTime() < deadline; ) {
                Thread.sleep(5);
            }
            assertThat(pub.published()).isEqualTo(batches.size());

            ZMQ.Socket replay = ctx.createSocket(SocketType.DEALER);
            replay.connect(pub.replayEndpoint());
            replay.setReceiveTimeOut(60_000);
            List<Frame> full = replay(replay, 0);
            assertThat(full).extracting(Frame::seq).containsExactlyElementsOf(seqs(0, batches.size()));
            for (Frame f : live) {
                assertThat(full.get((int) f.seq()).payload()).as("replayed batch " + f.seq()).isEqualTo(f.payload());
            }
            EventWire.State whole = new EventWire.State();
            full.forEach(f -> whole.apply(f.seq(), f.payload()));
            assertThat(whole.held()).isNotEmpty();
            for (int start = 0; start <= batches.size(); start++) {
                EventWire.State router = new EventWire.State();
                for (int s = 0; s < start; s++) {
                    router.apply(s, full.get(s).payload());
                }
                List<Frame> rest = replay(replay, start);
                assertThat(rest).extracting(Frame::seq).containsExactlyElementsOf(seqs(start, batches.size()));
                rest.forEach(f -> router.apply(f.seq(), f.payload()));
                assertThat(router.held()).as("keys after a replay from " + start).isEqualTo(whole.held());
            }
        }
    }

    @Test
    void theReplayBufferKeepsOnlyTheLastBatches() throws Exception {
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 16, KvEventEncoder.HashFormat.INT, 0);
        try (KvEventPublisher pub = new KvEventPublisher(new KvEventPublisher.Config("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", "", 5, 100), enc);
             ZContext ctx = new ZContext()) {
            for (List<KvEvent> b : randomBatches(12, new SplittableRandom(7))) {
                pub.publish(b);
            }
            while (pub.published() < 12) {
                Thread.sleep(5);
            }
            ZMQ.Socket replay = ctx.createSocket(SocketType.DEALER);
            replay.connect(pub.replayEndpoint());
            replay.setReceiveTimeOut(60_000);
            assertThat(replay(replay, 0)).extracting(Frame::seq).containsExactly(7L, 8L, 9L, 10L, 11L);
            assertThat(replay(replay, 10)).extracting(Frame::seq).containsExactly(10L, 11L);
            assertThat(replay(replay, 12)).isEmpty();
        }
    }

    @Test
    void aFailedPublishingThreadIsReportedToTheCallerInsteadOfLosingBatchesOrBlockingIt() throws Exception {
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 16, KvEventEncoder.HashFormat.INT, 0);
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        KvEventPublisher.BatchEncoder faultInjecting = (t, events) -> {
            if (calls.incrementAndGet() == 3) {
                throw new IllegalStateException("test: encoder bug");
            }
            return enc.encode(t, events);
        };
        // A queue of 2 batches: before the fix, the third publish after the thread died blocked for ever.
        try (KvEventPublisher pub = new KvEventPublisher(new KvEventPublisher.Config("tcp://127.0.0.1:*", null, "", 10, 2),
                faultInjecting)) {
            List<List<KvEvent>> batches = randomBatches(10, new SplittableRandom(3));
            Throwable thrown = null;
            for (int i = 0; i < batches.size() && thrown == null; i++) {
                try {
                    pub.publish(batches.get(i));
                } catch (IllegalStateException e) {
                    thrown = e;
                }
            }
            assertThat(thrown).as("publish after the thread failed").isNotNull()
                    .hasMessageContaining("the KV event publisher failed").hasMessageContaining("test: encoder bug");
            assertThat(pub.published()).as("batches sent before the failure").isEqualTo(2);
        }
    }

    /** The monitor events of a socket since it was created, with their times, gathered on a thread until closed. */
    private static final class JoinWatch implements AutoCloseable {
        private final long start = System.nanoTime();
        private final List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
        private final ZMQ.Socket sub;
        private final Thread thread;
        private volatile boolean done;

        JoinWatch(ZContext ctx, ZMQ.Socket sub) {
            this.sub = sub;
            String address = "inproc://join-watch-" + System.identityHashCode(this);
            sub.monitor(address, ZMQ.EVENT_ALL);
            ZMQ.Socket monitor = ctx.createSocket(SocketType.PAIR);
            monitor.setReceiveTimeOut(100);
            monitor.connect(address);
            thread = Thread.ofPlatform().daemon().name("join-watch").start(() -> {
                while (!done) {
                    ZMQ.Event e = ZMQ.Event.recv(monitor);
                    if (e != null) {
                        events.add(String.format("%d ms: event %d (%s)", elapsedMillis(), e.getEvent(), e.getValue()));
                    }
                }
                monitor.close();
            });
        }

        long elapsedMillis() {
            return (System.nanoTime() - start) / 1_000_000;
        }

        String events() {
            synchronized (events) {
                return events.toString();
            }
        }

        @Override
        public void close() throws InterruptedException {
            sub.monitor(null, 0);
            done = true;
            thread.join(5_000);
        }
    }

    /** Batches of random stores, removals of stored keys and, rarely, clears. */
    static List<List<KvEvent>> randomBatches(int n, SplittableRandom rnd) {
        List<List<KvEvent>> out = new ArrayList<>();
        List<BlockKey> stored = new ArrayList<>();
        long seq = 0;
        for (int i = 0; i < n; i++) {
            List<KvEvent> b = new ArrayList<>();
            for (int j = 1 + rnd.nextInt(3); j > 0; j--) {
                int kind = rnd.nextInt(20);
                String tier = rnd.nextBoolean() ? "device" : "host";
                if (kind == 0) {
                    b.add(new KvEvent.AllCleared(++seq, tier));
                    stored.clear();
                } else if (kind < 6 && !stored.isEmpty()) {
                    b.add(new KvEvent.BlockRemoved(++seq, List.of(stored.remove(rnd.nextInt(stored.size()))), tier));
                } else {
                    BlockKey k = new BlockKey(rnd.nextLong(), rnd.nextLong(), rnd.nextLong(), rnd.nextLong());
                    stored.add(k);
                    b.add(new KvEvent.BlockStored(++seq, List.of(k), SEED, tier, List.of()));
                }
            }
            out.add(b);
        }
        return out;
    }

    private static Frame frame(List<byte[]> msg) {
        assertThat(msg).hasSize(3);
        assertThat(new String(msg.get(0), StandardCharsets.UTF_8)).isEqualTo("kv@test");
        return new Frame(ByteBuffer.wrap(msg.get(1)).getLong(), msg.get(2));
    }

    private static List<Frame> replay(ZMQ.Socket dealer, long start) {
        dealer.sendMore(new byte[0]); // the empty delimiter a REQ socket would add
        dealer.send(ByteBuffer.allocate(8).putLong(start).array());
        List<Frame> out = new ArrayList<>();
        while (true) {
            List<byte[]> msg = EventWire.recv(dealer);
            assertThat(msg).as("a replay reply within 60 s").isNotNull();
            assertThat(msg.getFirst()).as("delimiter").isEmpty();
            long seq = ByteBuffer.wrap(msg.get(2)).getLong();
            if (seq == -1) {
                assertThat(msg.get(1)).isEmpty();
                assertThat(msg.get(3)).isEmpty();
                return out;
            }
            out.add(new Frame(seq, msg.get(3)));
        }
    }


    private static List<Long> seqs(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long s = from; s < to; s++) {
            out.add(s);
        }
        return out;
    }
}
