package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.transfer.net.WireMessage.Ack;
import dev.pagewarden.core.transfer.net.WireMessage.Done;
import dev.pagewarden.core.transfer.net.WireMessage.DoneResult;
import dev.pagewarden.core.transfer.net.WireMessage.FrameResult;
import dev.pagewarden.core.transfer.net.WireMessage.Hello;
import dev.pagewarden.core.transfer.net.WireMessage.Page;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The wire format: every message survives encoding and decoding, and the decoder refuses what a sound peer never sends. */
class WireFrameTest {
    static final KvLayout LAYOUT = new KvLayout(2, 8, 4, 4, KvLayout.Order.SLOT_MAJOR);

    static Page page(int index, int bytes) {
        byte[] b = new byte[bytes];
        new Random(index).nextBytes(b);
        return new Page(7, "tenant-a", "prefill-0", 11, 3, 2, index, 0, 3, 0x1234abcd, new long[] {7, 7, 7, 0},
                Unpooled.wrappedBuffer(b));
    }

    static List<WireMessage> everyMessage() {
        return List.of(new Hello(WireCodec.PROTOCOL_VERSION, "prefill-node-ä", LAYOUT),
                page(0, (int) LAYOUT.pageBytes()), new Done(7, 2, 6, 2), new Ack(7, 2),
                new FrameResult(7, 2, 1, true), new FrameResult(7, 2, 0, false), new DoneResult(7, 2, true),
                new Hello(1, "x", LAYOUT.in(KvLayout.Order.HEAD_PANELS)));
    }

    /** The bytes an encoder writes for {@code msgs}, in order. */
    static ByteBuf encode(List<WireMessage> msgs) {
        EmbeddedChannel ch = new EmbeddedChannel(new WireCodec.Encoder());
        for (WireMessage m : msgs) {
            ch.writeOutbound(m);
        }
        ByteBuf all = Unpooled.buffer();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            all.writeBytes(b);
            b.release();
        }
        return all;
    }

    /** Frames numbered as given, not as an encoder would. */
    static ByteBuf frames(long[] seqs, WireMessage... msgs) {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < msgs.length; i++) {
            WireCodec.write(ByteBufAllocator.DEFAULT, seqs[i], msgs[i], out);
        }
        ByteBuf all = Unpooled.buffer();
        for (Object o : out) {
            all.writeBytes((ByteBuf) o);
            ((ByteBuf) o).release();
        }
        return all;
    }

    static List<WireMessage> decode(EmbeddedChannel ch) {
        List<WireMessage> got = new ArrayList<>();
        for (WireMessage m; (m = ch.readInbound()) != null; ) {
            got.add(m);
        }
        return got;
    }

    @Test
    void everyMessageRoundTrips() {
        List<WireMessage> sent = everyMessage();
        ByteBuf wire = encode(sent);
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.maxFrameLength(LAYOUT)));
        // byte by byte: the decoder must reassemble frames split anywhere
        while (wire.isReadable()) {
            in.writeInbound(wire.readRetainedSlice(1));
        }
        wire.release();
        List<WireMessage> got = decode(in);
        assertThat(got).hasSameSizeAs(sent);
        for (int i = 0; i < sent.size(); i++) {
            if (sent.get(i) instanceof Page p) {
                Page q = (Page) got.get(i);
                assertThat(q).usingRecursiveComparison().ignoringFields("bytes").isEqualTo(p);
                // the encoder consumed the sent buffer: compare with a fresh copy of the same page
                assertThat(ByteBufUtil.getBytes(q.bytes()))
                        .isEqualTo(ByteBufUtil.getBytes(page(p.pageIndex(), (int) LAYOUT.pageBytes()).bytes()));
                q.bytes().release();
            } else {
                assertThat(got.get(i)).isEqualTo(sent.get(i));
            }
        }
    }

    @Test
    void theLayoutIsBigEndianLengthTypeSequenceThenFields() {
        ByteBuf wire = encode(List.of(new Ack(0x0102030405060708L, 9), new FrameResult(5, 6, 7, true)));
        ByteBuffer b = ByteBuffer.wrap(ByteBufUtil.getBytes(wire)); // java.nio's default order is big-endian
        assertThat(b.getInt()).isEqualTo(1 + 8 + 8 + 4);
        assertThat(b.get()).isEqualTo((byte) 4);
        assertThat(b.getLong()).isEqualTo(0);
        assertThat(b.getLong()).isEqualTo(0x0102030405060708L);
        assertThat(b.getInt()).isEqualTo(9);
        assertThat(b.getInt()).isEqualTo(1 + 8 + 8 + 4 + 4 + 1);
        assertThat(b.get()).isEqualTo((byte) 5);
        assertThat(b.getLong()).isEqualTo(1);
        assertThat(b.getLong()).isEqualTo(5);
        assertThat(b.getInt()).isEqualTo(6);
        assertThat(b.getInt()).isEqualTo(7);
        assertThat(b.get()).isEqualTo((byte) 1);
        assertThat(b.hasRemaining()).isFalse();
    }

    @Test
    void aReplayedSequenceNumberIsRefused() {
        assertRefused(frames(new long[] {0, 1, 1}, new Ack(1, 1), new Ack(2, 1), new Ack(3, 1)), 2, "1 where 2 was due");
    }

    @Test
    void aReorderedSequenceIsRefused() {
        assertRefused(frames(new long[] {0, 2, 1}, new Ack(1, 1), new Ack(2, 1), new Ack(3, 1)), 1, "2 where 1 was due");
    }

    @Test
    void aSkippedSequenceNumberIsRefused() {
        assertRefused(frames(new long[] {0, 1, 3, 4}, new Ack(1, 1), new Ack(2, 1), new Ack(3, 1), new Ack(4, 1)), 2,
                "3 where 2 was due");
    }

    @Test
    void theFirstMessageMustBeNumberedZero() {
        assertRefused(frames(new long[] {1}, new Ack(1, 1)), 0, "1 where 0 was due");
    }

    @Test
    void anOversizeFrameIsRefusedFromItsLengthAlone() {
        int max = WireCodec.maxFrameLength(LAYOUT);
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(max));
        // a page image larger than this pool's pages: only its first bytes have arrived
        ByteBuf wire = frames(new long[] {0}, page(0, (int) LAYOUT.pageBytes() + 2 * WireCodec.MAX_STRING_BYTES + 64));
        assertThat(wire.getInt(0)).isGreaterThan(max);
        assertThatThrownBy(() -> in.writeInbound(wire.retainedSlice(0, 4)))
                .isInstanceOf(CorruptedFrameException.class).hasMessageContaining("frame length " + wire.getInt(0));
        in.writeInbound(wire.retainedSlice(4, wire.readableBytes() - 4));
        assertThat(decode(in)).isEmpty();
        wire.release();
    }

    @Test
    void aFullPageOfTheExpectedLayoutFits() {
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.maxFrameLength(LAYOUT)));
        String longest = "n".repeat(WireCodec.MAX_STRING_BYTES);
        Page p = new Page(1, longest, longest, 0, 0, 0, 0, 0, 4, 0, new long[LAYOUT.pageTokens()],
                Unpooled.wrappedBuffer(new byte[(int) LAYOUT.pageBytes()]));
        in.writeInbound(frames(new long[] {0}, p));
        List<WireMessage> got = decode(in);
        assertThat(got).hasSize(1);
        ((Page) got.getFirst()).bytes().release();
    }

    @Test
    void aControlMessageFrameIsCappedEvenWithoutPages() {
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.MAX_CONTROL_FRAME));
        assertThatThrownBy(() -> in.writeInbound(frames(new long[] {0}, page(0, 2 * WireCodec.MAX_STRING_BYTES))))
                .isInstanceOf(CorruptedFrameException.class).hasMessageContaining("frame length");
    }

    @Test
    void aHelloWhosePageSizeDisagreesWithItsLayoutIsRefused() {
        ByteBuf wire = frames(new long[] {0}, new Hello(WireCodec.PROTOCOL_VERSION, "prefill-0", LAYOUT));
        int last = wire.writerIndex() - 8;
        assertThat(wire.getLong(last)).isEqualTo(2L * 2 * 4 * 8 * Float.BYTES); // layers, K and V, slots, kvDim, fp32
        wire.setLong(last, LAYOUT.pageBytes() / 2); // a half-precision page of the same shape
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.MAX_CONTROL_FRAME));
        assertThatThrownBy(() -> in.writeInbound(wire)).isInstanceOf(CorruptedFrameException.class)
                .hasMessageContaining("pages of 256 bytes, its layout makes 512");
    }

    @Test
    void aNodeNameTooLongForTheWireIsRefusedUpFront() {
        assertThatThrownBy(() -> new NetKvServer("n".repeat(2000))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("node name of 2000 bytes");
    }

    /** Frames before {@code goodBefore} are delivered; the decoder then refuses, and reads nothing after. */
    private static void assertRefused(ByteBuf wire, int goodBefore, String reason) {
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.MAX_CONTROL_FRAME));
        assertThatThrownBy(() -> in.writeInbound(wire)).isInstanceOf(CorruptedFrameException.class).hasMessageContaining("sequence number " + reason);
        assertThat(decode(in)).hasSize(goodBefore);
        in.writeInbound(frames(new long[] {goodBefore}, new Ack(9, 9)));
        assertThat(decode(in)).as("nothing is read after a refusal").isEmpty();
    }
}
