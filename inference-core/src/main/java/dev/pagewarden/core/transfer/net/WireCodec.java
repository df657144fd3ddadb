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
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToMessageEncoder;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The byte format of {@link WireMessage}s, big-endian: {@code int length} (of what follows), {@code byte type},
 * {@code long sequence}, then the message's fields in record order. Strings are a {@code short} byte count and
 * UTF-8 (at most {@value #MAX_STRING_BYTES} bytes); a page's writers are an {@code int} count and longs, its
 * bytes an {@code int} count and the raw page image. A hello's layout is its five fields and then the page
 * size in bytes, which the receiver checks against the layout (a page image of another element size is refused).
 *
 * <p>Each direction of a connection numbers its messages from 0 up by exactly 1; a receiver that sees any
 * other number (a replayed, reordered or dropped message) stops reading that connection. A length above the
 * receiver's maximum (a page image and its header, for the page size it expects) is refused before any of
 * the frame is buffered.
 */
final class WireCodec {
    static final int PROTOCOL_VERSION = 1;
    static final int MAX_STRING_BYTES = 1024;
    /** Longest frame of any message but a page: hello, done, ack and the answers. */
    static final int MAX_CONTROL_FRAME = 1 + 8 + 4 + 2 + MAX_STRING_BYTES + 4 * 4 + 1 + 8;
    private static final int MIN_FRAME = 1 + 8;
    private static final byte HELLO = 1, PAGE = 2, DONE = 3, ACK = 4, FRAME_RESULT = 5, DONE_RESULT = 6;
    /** A page frame without its writers and bytes. */
    private static final int PAGE_HEADER = 1 + 8 + 8 + 2 * (2 + MAX_STRING_BYTES) + 4 + 8 + 4 * 5 + 4 + 4;

    private WireCodec() {
    }

    /** The longest frame a receiver of pages of {@code layout} accepts: one page image, its writer shadow and header. */
    static int maxFrameLength(KvLayout layout) {
        long max = PAGE_HEADER + 8L * layout.pageTokens() + layout.pageBytes();
        if (max > Integer.MAX_VALUE - 4) {
            throw new IllegalArgumentException("a page of " + layout.pageBytes() + " bytes does not fit in one frame");
        }
        return (int) Math.max(max, MAX_CONTROL_FRAME);
    }

    /**
     * Appends the frame(s) of {@code msg} numbered {@code seq} to {@code out}: a page is its header and then its
     * own bytes buffer (not copied; ownership passes to {@code out}).
     */
    static void write(ByteBufAllocator alloc, long seq, WireMessage msg, List<Object> out) {
        ByteBuf b = alloc.buffer(msg instanceof Page p ? PAGE_HEADER + 8 * p.writers().length : MAX_CONTROL_FRAME + 4);
        try {
            fill(b, seq, msg, out);
        } catch (RuntimeException e) {
            b.release();
            if (msg instanceof Page p) {
                p.bytes().release();
            }
            throw e;
        }
    }

    private static void fill(ByteBuf b, long seq, WireMessage msg, List<Object> out) {
        b.writeInt(0); // length, filled in below
        switch (msg) {
            case Hello h -> {
                head(b, HELLO, seq);
                b.writeInt(h.version());
                string(b, h.node());
                KvLayout l = h.layout();
                b.writeInt(l.nLayers()).writeInt(l.kvDim()).writeInt(l.pageTokens()).writeInt(l.headDim());
                b.writeByte(l.order().ordinal());
                b.writeLong(l.pageBytes());
            }
            case Page p -> {
                head(b, PAGE, seq);
                b.writeLong(p.requestId());
                string(b, p.tenant());
                string(b, p.sourcePool());
                b.writeInt(p.sourcePage()).writeLong(p.sourceEpoch()).writeInt(p.generation()).writeInt(p.pageIndex());
                b.writeInt(p.firstSlot()).writeInt(p.slotCount()).writeInt(p.crc32c());
                b.writeInt(p.writers().length);
                for (long w : p.writers()) {
                    b.writeLong(w);
                }
                int bytes = p.bytes().readableBytes();
                b.writeInt(bytes);
                b.setInt(0, b.readableBytes() - 4 + bytes);
                out.add(b);
                out.add(p.bytes());
                return;
            }
            case Done d -> {
                head(b, DONE, seq);
                b.writeLong(d.requestId()).writeInt(d.generation()).writeInt(d.totalTokens()).writeInt(d.frames());
            }
            case Ack a -> {
                head(b, ACK, seq);
                b.writeLong(a.requestId()).writeInt(a.generation());
            }
            case FrameResult r -> {
                head(b, FRAME_RESULT, seq);
                b.writeLong(r.requestId()).writeInt(r.generation()).writeInt(r.pageIndex()).writeBoolean(r.accepted());
            }
            case DoneResult r -> {
                head(b, DONE_RESULT, seq);
                b.writeLong(r.requestId()).writeInt(r.generation()).writeBoolean(r.ready());
            }
        }
        b.setInt(0, b.readableBytes() - 4);
        out.add(b);
    }

    private static void head(ByteBuf b, byte type, long seq) {
        b.writeByte(type).writeLong(seq);
    }

    private static void string(ByteBuf b, String s) {
        b.writeShort(requireName(s, "name").length).writeBytes(s.getBytes(StandardCharsets.UTF_8));
    }

    /** The UTF-8 of a name that fits on the wire, or an exception that says why it does not. */
    static byte[] requireName(String s, String what) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException(what + " of " + utf8.length + " bytes; at most " + MAX_STRING_BYTES
                    + " fit on the wire");
        }
        return utf8;
    }

    private static String string(ByteBuf b) {
        int n = b.readUnsignedShort();
        if (n > MAX_STRING_BYTES || n > b.readableBytes()) {
            throw new CorruptedFrameException("string of " + n + " bytes");
        }
        return b.readCharSequence(n, StandardCharsets.UTF_8).toString();
    }

    /** Parses the body of one frame (after its sequence number); a page's bytes are a retained slice of {@code b}. */
    private static WireMessage read(byte type, ByteBuf b) {
        return switch (type) {
            case HELLO -> {
                int version = b.readInt();
                String node = string(b);
                int layers = b.readInt(), kvDim = b.readInt(), pageTokens = b.readInt(), headDim = b.readInt();
                int order = b.readByte();
                if (order < 0 || order >= KvLayout.Order.values().length) {
                    throw new CorruptedFrameException("unknown KV order " + order);
                }
                KvLayout layout;
                try {
                    layout = new KvLayout(layers, kvDim, pageTokens, headDim, KvLayout.Order.values()[order]);
                } catch (IllegalArgumentException e) {
                    throw new CorruptedFrameException(e.getMessage());
                }
                long pageBytes = b.readLong();
                if (pageBytes != layout.pageBytes()) {
                    throw new CorruptedFrameException("hello claims pages of " + pageBytes + " bytes, its layout makes "
                            + layout.pageBytes());
                }
                yield new Hello(version, node, layout);
            }
            case PAGE -> {
                long requestId = b.readLong();
                String tenant = string(b);
                String pool = string(b);
                int sourcePage = b.readInt();
                long sourceEpoch = b.readLong();
                int generation = b.readInt(), pageIndex = b.readInt(), firstSlot = b.readInt(), slotCount = b.readInt();
                int crc = b.readInt();
                int nWriters = b.readInt();
                if (nWriters < 0 || 8L * nWriters > b.readableBytes()) {
                    throw new CorruptedFrameException("page claims " + nWriters + " writers");
                }
                long[] writers = new long[nWriters];
                for (int i = 0; i < nWriters; i++) {
                    writers[i] = b.readLong();
                }
                int nBytes = b.readInt();
                if (nBytes != b.readableBytes()) {
                    throw new CorruptedFrameException("page claims " + nBytes + " bytes, frame holds " + b.readableBytes());
                }
                yield new Page(requestId, tenant, pool, sourcePage, sourceEpoch, generation, pageIndex, firstSlot, slotCount,
                        crc, writers, b.readRetainedSlice(nBytes));
            }
            case DONE -> new Done(b.readLong(), b.readInt(), b.readInt(), b.readInt());
            case ACK -> new Ack(b.readLong(), b.readInt());
            case FRAME_RESULT -> new FrameResult(b.readLong(), b.readInt(), b.readInt(), b.readBoolean());
            case DONE_RESULT -> new DoneResult(b.readLong(), b.readInt(), b.readBoolean());
            default -> throw new CorruptedFrameException("unknown message type " + type);
        };
    }

    /** Numbers outgoing messages of one connection 0, 1, 2, ... */
    static final class Encoder extends MessageToMessageEncoder<WireMessage> {
        private long next;

        Encoder() {
            super(WireMessage.class);
        }

        @Override
        protected void encode(ChannelHandlerContext ctx, WireMessage msg, List<Object> out) {
            WireCodec.write(ctx.alloc(), next++, msg, out);
        }
    }

    /**
     * Frames and parses incoming messages of one connection, refusing an oversize length and any sequence
     * number but the next. After a refusal it reads nothing more (the connection's handler closes it).
     */
    static final class Decoder extends ByteToMessageDecoder {
        private final int maxFrame;
        private long expected;
        private boolean failed;

        Decoder(int maxFrame) {
            this.maxFrame = maxFrame;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (failed) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (in.readableBytes() < 4) {
                return;
            }
            int length = in.getInt(in.readerIndex());
            if (length < MIN_FRAME || length > maxFrame) {
                throw refuse("frame length " + length + " outside [" + MIN_FRAME + ", " + maxFrame + "]");
            }
            if (in.readableBytes() < 4 + length) {
                return;
            }
            in.skipBytes(4);
            ByteBuf frame = in.readRetainedSlice(length);
            try {
                byte type = frame.readByte();
                long seq = frame.readLong();
                if (seq != expected) {
                    throw refuse("sequence number " + seq + " where " + expected + " was due (replayed, reordered or lost message)");
                }
                expected++;
                WireMessage msg;
                try {
                    msg = read(type, frame);
                } catch (IndexOutOfBoundsException e) {
                    throw refuse("truncated message of type " + type);
                }
                if (frame.isReadable()) {
                    if (msg instanceof Page p) {
                        p.bytes().release();
                    }
                    throw refuse(frame.readableBytes() + " bytes left over after message of type " + type);
                }
                out.add(msg);
            } catch (CorruptedFrameException e) {
                failed = true;
                throw e;
            } finally {
                frame.release();
            }
        }

        private CorruptedFrameException refuse(String why) {
            failed = true;
            return new CorruptedFrameException(why);
        }
    }
}
