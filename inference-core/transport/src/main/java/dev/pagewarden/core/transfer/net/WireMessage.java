package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import io.netty.buffer.ByteBuf;

/**
 * A message between a prefill node (the sender of pages) and a decode node (their receiver). On the
 * wire each one also carries its connection's sequence number in its direction (see {@link WireCodec}).
 */
sealed interface WireMessage {

    /** What a connection carries, said in its hello: pages of a transfer, or control messages. */
    enum Purpose { KV_DATA, CONTROL }

    /**
     * The first message each way: who speaks, what the connection is for, and the KV layout its pages have
     * (pools that disagree must not exchange pages). A control client that holds no pages sends no layout (null).
     */
    record Hello(int version, String node, Purpose purpose, KvLayout layout) implements WireMessage {
        /** A hello of a KV data connection. */
        Hello(int version, String node, KvLayout layout) {
            this(version, node, Purpose.KV_DATA, layout);
        }
    }

    /** A control message (see {@link ControlMessage}); only on a connection whose hello said {@link Purpose#CONTROL}. */
    record Control(ControlMessage body) implements WireMessage {
    }

    /**
     * One page of a transfer. {@code bytes} is the whole page image ({@link KvLayout#pageBytes()}); of it,
     * slots {@code [firstSlot, firstSlot + slotCount)} are the request's. The receiver owns {@code bytes}
     * (a reference-counted buffer) and releases it.
     */
    record Page(long requestId, String tenant, String sourcePool, int sourcePage, long sourceEpoch, int generation,
                int pageIndex, int firstSlot, int slotCount, int crc32c, long[] writers, ByteBuf bytes) implements WireMessage {
    }

    /** The sender's claim that the transfer is complete. */
    record Done(long requestId, int generation, int totalTokens, int frames) implements WireMessage {
    }

    /** No write of (request, generation) is in flight any more: sent at the end of every transfer, completed or not. */
    record Ack(long requestId, int generation) implements WireMessage {
    }

    /** The receiver's answer to one page. */
    record FrameResult(long requestId, int generation, int pageIndex, boolean accepted) implements WireMessage {
    }

    /** The receiver's answer to {@link Done}: whether the request is verified and ready to decode. */
    record DoneResult(long requestId, int generation, boolean ready) implements WireMessage {
    }
}
