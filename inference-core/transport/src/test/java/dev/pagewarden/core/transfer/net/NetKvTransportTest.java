package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.decode.KvIntake;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.PageFrame;
import dev.pagewarden.core.transfer.TransferDone;
import dev.pagewarden.core.transfer.TransferJob;
import dev.pagewarden.core.transfer.net.WireMessage.Page;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two real pools of the stories260K model on a CPU backend, a {@link KvIntake} behind a {@link NetKvServer}, and a
 * {@link NetKvTransport} sending to it over TLS 1.3 on loopback: what arrives, and what happens when the wire fails.
 */
class NetKvTransportTest {
    static final TestPki PKI = new TestPki("pagewarden-test-ca");
    static final ClusterTls DECODE = PKI.node("decode-0");
    static final ClusterTls PREFILL = PKI.node("prefill-0");
    static final long WAIT_SECONDS = 30;

    Backend backend;
    KvLayout layout;
    KvPool source;
    KvPool dest;
    int destFreeAtStart;
    KvIntake<Sequence> intake;
    final List<SafetyEvent> events = new CopyOnWriteArrayList<>();
    final List<Sequence> ready = new CopyOnWriteArrayList<>();
    /** One permit each time the intake frees a transfer's pages. */
    final Semaphore freed = new Semaphore(0);
    /** Page indices the intake was shown, in order. */
    final List<Integer> seen = new CopyOnWriteArrayList<>();
    NetKvServer server;
    int serverPort;
    NetKvTransport transport;

    @BeforeEach
    void pools() {
        backend = Backends.select("cpu").create(IsolationFixtures.stories(), new BackendOptions(1));
        source = new KvPool("prefill-0", backend.allocateKv(KvLayout.of(backend.config(), 4), 8));
        dest = new KvPool("decode-0", backend.allocateKv(KvLayout.of(backend.config(), 4), 8));
        layout = dest.layout(); // in the backend's own order
        destFreeAtStart = dest.freePages();
        intake = new KvIntake<>(dest, EngineContext.of("decode", events::add, Clock.SYSTEM),
                Duration.ofMinutes(5), ready::add, s -> { }, freed::release);
        server = new NetKvServer("decode-0");
    }

    @AfterEach
    void close() {
        if (transport != null) {
            transport.close();
        }
        server.close();
        source.storage().close();
        dest.storage().close();
        backend.close();
    }

    /** Starts the server with {@code expected} as its pool's layout and a transport to it presenting {@code client}. */
    void connect(KvLayout expected, io.netty.handler.ssl.SslContext client) throws Exception {
        connect(expected, client, Duration.ofSeconds(WAIT_SECONDS));
    }

    void connect(KvLayout expected, io.netty.handler.ssl.SslContext client, Duration answerTimeout) throws Exception {
        KvReceiver counting = new KvReceiver() {
            @Override
            public boolean onFrame(PageFrame frame) {
                seen.add(frame.pageIndex());
                return intake.onFrame(frame);
            }

            @Override
            public boolean onDone(TransferDone done) {
                return intake.onDone(done);
            }

            @Override
            public void onAck(long requestId, int generation) {
                intake.onAck(requestId, generation);
            }
        };
        int port = server.start("127.0.0.1", 0, DECODE.serverContext(), counting, expected);
        serverPort = port;
        transport = new NetKvTransport("127.0.0.1", port, client, "prefill-0", Duration.ofSeconds(10),
                Duration.ofSeconds(10), answerTimeout, 2);
    }

    void connect() throws Exception {
        connect(layout, PREFILL.clientContext());
    }

    /** Request {@code id} with a {@code tokens}-token prompt: decode pages reserved, its transfer expected. */
    Sequence expect(long id, int tokens) {
        Sequence seq = new Sequence(id, new GenerationRequest("t", IsolationFixtures.prompt(tokens, (int) id), 4,
                SamplingParams.greedy()), TokenListener.NONE, 0);
        seq.moveTo(new RequestState.Admitted());
        seq.decodePages(dest.allocate(id, "t", layout.pagesFor(tokens)), 0);
        seq.moveTo(new RequestState.Reserved());
        seq.moveTo(new RequestState.Prefilling());
        seq.moveTo(new RequestState.Transferring());
        seq.nextTransferGeneration();
        intake.expect(seq);
        return seq;
    }

    /** The request's prefilled KV: source pages of seeded random bytes, every slot written by the request. */
    List<PageRef> prefilled(long id, int tokens) {
        List<PageRef> pages = source.allocate(id, "t", layout.pagesFor(tokens));
        Random random = new Random(id);
        long[] writers = new long[layout.pageTokens()];
        Arrays.fill(writers, id);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(layout.pageBytes());
            for (PageRef p : pages) {
                for (long i = 0; i < layout.pageFloats(); i++) {
                    page.setAtIndex(ValueLayout.JAVA_FLOAT, i, random.nextFloat() * 2 - 1);
                }
                source.storage().writeSlots(p.page(), page, layout.pageTokens(), writers);
            }
        }
        return pages;
    }

    /** Sends request {@code seq}'s prefilled pages; returns the outcome the transport reported. */
    boolean transfer(Sequence seq, List<PageRef> pages) throws Exception {
        CompletableFuture<Boolean> outcome = new CompletableFuture<>();
        List<Boolean> calls = new CopyOnWriteArrayList<>();
        transport.send(new TransferJob(seq.id(), "t", seq.transferGeneration(), source, pages,
                seq.request().promptLength(), ok -> {
                    calls.add(ok);
                    outcome.complete(ok);
                }));
        boolean ok = outcome.get(3 * WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(calls).as("outcome reported once").hasSize(1);
        return ok;
    }

    @Test
    void pagesArriveByteIdenticalAndTheRequestIsReady() throws Exception {
        connect();
        Sequence seq = expect(1, 10); // pages of 4, 4 and 2 tokens
        List<PageRef> pages = prefilled(1, 10);

        assertThat(transfer(seq, pages)).isTrue();

        assertThat(ready).containsExactly(seq);
        assertThat(seq.state()).isInstanceOf(RequestState.Ready.class);
        assertThat(seen).containsExactly(0, 1, 2);
        assertThat(events).isEmpty();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sent = arena.allocate(layout.pageBytes());
            MemorySegment got = arena.allocate(layout.pageBytes());
            for (int i = 0; i < pages.size(); i++) {
                int tokens = Math.min(layout.pageTokens(), 10 - i * layout.pageTokens());
                source.storage().readPage(pages.get(i).page(), sent);
                int dst = seq.decodePages().get(i).page();
                dest.storage().readPage(dst, got);
                List<long[]> runs = new ArrayList<>();
                layout.slotRuns(tokens, (offset, floats) -> runs.add(new long[] {offset, floats}));
                for (long[] run : runs) {
                    long from = run[0] * Float.BYTES;
                    long to = from + run[1] * Float.BYTES;
                    assertThat(got.asSlice(from, to - from).mismatch(sent.asSlice(from, to - from)))
                            .as("page %d, bytes [%d, %d)", i, from, to).isEqualTo(-1L);
                }
                assertThat(Arrays.copyOf(dest.storage().writers(dst), tokens)).as("writers of page " + i)
                        .containsOnly(1L);
            }
        }
    }

    @Test
    void aPageCorruptedInFlightIsRefusedBeforeTheIntakeAndTheTransferFails() throws Exception {
        server.pipelineHook(p -> p.addAfter(NetKvServer.DECODER, "corrupt", new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof Page page && page.pageIndex() == 1) {
                    int at = page.bytes().readerIndex() + 17;
                    page.bytes().setByte(at, page.bytes().getByte(at) ^ 0x40); // one bit, after the checksum was taken
                }
                ctx.fireChannelRead(msg);
            }
        }));
        connect();
        Sequence seq = expect(1, 10);

        assertThat(transfer(seq, prefilled(1, 10))).isFalse();

        assertThat(freed.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)).as("the request's pages freed").isTrue();
        assertThat(seen).as("the corrupted page, and any page after it, never reach the intake").containsExactly(0);
        assertFailedAndFreed(seq);
    }

    @Test
    void aConnectionLostMidTransferFailsItAndFreesThePagesThenTheNextTransferReconnects() throws Exception {
        int k = 2;
        server.pipelineHook(p -> p.addAfter(NetKvServer.DECODER, "cut", new ChannelInboundHandlerAdapter() {
            int pages;

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof Page page && pages++ >= k) {
                    // the k-th page and whatever came in the same read are lost with the connection
                    page.bytes().release();
                    ctx.channel().close();
                    return;
                }
                ctx.fireChannelRead(msg);
            }
        }));
        connect();
        Sequence seq = expect(1, 16); // four full pages; the connection dies on the third

        assertThat(transfer(seq, prefilled(1, 16))).isFalse();

        assertThat(freed.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)).as("the request's pages freed").isTrue();
        assertThat(seen).containsExactly(0, 1);
        assertFailedAndFreed(seq);

        server.pipelineHook(p -> { });
        Sequence next = expect(2, 6);
        assertThat(transfer(next, prefilled(2, 6))).as("the next transfer, on a new connection").isTrue();
        assertThat(ready).containsExactly(next);
    }

    @Test
    void aSilentReceiverGetsNoMoreThanTheInFlightLimitAndTheTransferTimesOut() throws Exception {
        List<Integer> swallowed = new CopyOnWriteArrayList<>();
        server.pipelineHook(p -> p.addAfter(NetKvServer.DECODER, "silent", new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof Page page) { // read, never answered
                    swallowed.add(page.pageIndex());
                    page.bytes().release();
                    return;
                }
                ctx.fireChannelRead(msg);
            }
        }));
        connect(layout, PREFILL.clientContext(), Duration.ofSeconds(1));
        Sequence seq = expect(1, 16);

        assertThat(transfer(seq, prefilled(1, 16))).isFalse();

        assertThat(swallowed).as("pages sent without an answer (limit 2)").containsExactly(0, 1);
        assertThat(seen).isEmpty();
    }

    @Test
    void aClientCertificateOfAnotherAuthorityIsRefusedAtTheHandshake() throws Exception {
        TestPki other = new TestPki("pagewarden-test-ca"); // same name, another key: not the cluster's CA
        connect(layout, other.node("prefill-0").clientContext());
        Sequence seq = expect(1, 6);

        assertThat(transfer(seq, prefilled(1, 6))).isFalse();

        assertThat(seen).isEmpty();
        assertThat(seq.state()).isInstanceOf(RequestState.Transferring.class); // nothing landed; the engine decides
    }

    @Test
    void aSenderWithAnotherKvLayoutIsRefusedAtHello() throws Exception {
        connect(new KvLayout(layout.nLayers(), layout.kvDim(), 8, layout.headDim(), layout.order()),
                PREFILL.clientContext());
        Sequence seq = expect(1, 6);

        assertThat(transfer(seq, prefilled(1, 6))).isFalse();

        assertThat(seen).isEmpty();
    }

    /** How a rogue sender with a valid prefill certificate breaks its stream of frames. */
    enum Rogue {
        /** Page 1 with a checksum that does not match its bytes (the frame itself is well formed). */
        BAD_CHECKSUM,
        /** Page 1 sent under page 0's sequence number again. */
        REPLAYED_SEQUENCE,
        /** Page 2's frame before page 1's. */
        OUT_OF_ORDER
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(Rogue.class)
    void aRoguePrefillPeerIsRefusedNothingIsServedAndThePagesComeBack(Rogue rogue) throws Exception {
        connect(); // the server; the rogue below writes its own frames instead of the transport
        Sequence seq = expect(1, 12); // three full pages
        List<PageRef> pages = prefilled(1, 12);
        List<WireMessage> frames = new ArrayList<>();
        frames.add(new WireMessage.Hello(WireCodec.PROTOCOL_VERSION, "prefill-0", layout));
        TransferJob job = new TransferJob(1, "t", seq.transferGeneration(), source, pages, 12, ok -> { });
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staging = arena.allocate(layout.pageBytes(), 64);
            for (int i = 0; i < pages.size(); i++) {
                PageFrame f = dev.pagewarden.core.transfer.PageStaging.stage(job, i, staging);
                int crc = rogue == Rogue.BAD_CHECKSUM && i == 1 ? f.crc32c() ^ 1 : f.crc32c();
                frames.add(new Page(1, "t", f.sourcePool(), f.source().page(), f.source().epoch(), job.generation(),
                        f.pageIndex(), 0, f.tokens(), crc, f.writers(),
                        io.netty.buffer.Unpooled.wrappedBuffer(f.bytes().toArray(ValueLayout.JAVA_BYTE))));
            }
        }
        frames.add(new WireMessage.Done(1, job.generation(), 12, 3));
        long[] seqs = switch (rogue) {
            case BAD_CHECKSUM -> new long[] {0, 1, 2, 3, 4};
            case REPLAYED_SEQUENCE -> new long[] {0, 1, 1, 2, 3};
            case OUT_OF_ORDER -> new long[] {0, 1, 3, 2, 4};
        };
        if (rogue == Rogue.OUT_OF_ORDER) {
            java.util.Collections.swap(frames, 2, 3);
        }

        java.util.concurrent.BlockingQueue<WireMessage> answers = new java.util.concurrent.LinkedBlockingQueue<>();
        io.netty.channel.EventLoopGroup group = new io.netty.channel.MultiThreadIoEventLoopGroup(1,
                io.netty.channel.nio.NioIoHandler.newFactory());
        try {
            io.netty.channel.Channel ch = new io.netty.bootstrap.Bootstrap().group(group)
                    .channel(io.netty.channel.socket.nio.NioSocketChannel.class)
                    .handler(new io.netty.channel.ChannelInitializer<io.netty.channel.socket.SocketChannel>() {
                        @Override
                        protected void initChannel(io.netty.channel.socket.SocketChannel c) {
                            c.pipeline().addLast(PREFILL.clientContext().newHandler(c.alloc(), "127.0.0.1", serverPort),
                                    new WireCodec.Decoder(WireCodec.MAX_CONTROL_FRAME),
                                    new ChannelInboundHandlerAdapter() {
                                        @Override
                                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                            answers.add((WireMessage) msg);
                                        }
                                    });
                        }
                    }).connect("127.0.0.1", serverPort).sync().channel();
            ch.pipeline().get(io.netty.handler.ssl.SslHandler.class).handshakeFuture().sync();
            ch.writeAndFlush(WireFrameTest.frames(seqs, frames.toArray(WireMessage[]::new))).sync();
            if (rogue == Rogue.BAD_CHECKSUM) {
                // a well-formed frame: answered, the page refused, the transfer not ready
                WireMessage last;
                do {
                    last = answers.poll(WAIT_SECONDS, TimeUnit.SECONDS);
                    assertThat(last).as("answers to the rogue").isNotNull();
                } while (!(last instanceof WireMessage.DoneResult));
                assertThat(((WireMessage.DoneResult) last).ready()).isFalse();
                assertThat(answers).noneMatch(m -> m instanceof WireMessage.FrameResult r && r.pageIndex() == 1 && r.accepted());
                ch.close().sync(); // gone without its ack
            } else {
                // a broken stream: the receiver closes the connection
                assertThat(ch.closeFuture().await(WAIT_SECONDS, TimeUnit.SECONDS)).as("connection closed by the receiver").isTrue();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }

        assertThat(freed.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)).as("the request's pages freed").isTrue();
        assertThat(seen).as("only page 0, sent before the break, reached the intake").containsExactly(0);
        assertThat(ready).isEmpty();
        assertFailedAndFreed(seq);
    }

    private void assertFailedAndFreed(Sequence seq) {
        assertThat(seq.state()).isInstanceOfSatisfying(RequestState.Failed.class,
                f -> assertThat(f.code()).isEqualTo("kv_transfer_failed"));
        assertThat(events).extracting(SafetyEvent::type).containsExactly(SafetyEvent.Type.TRANSFER_INCOMPLETE);
        assertThat(intake.inFlight()).isZero();
        assertThat(dest.freePages()).isEqualTo(destFreeAtStart);
    }
}
