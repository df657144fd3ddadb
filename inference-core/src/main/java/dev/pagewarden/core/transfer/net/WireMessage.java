package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import io.netty.buffer.ByteBuf;

/**
 * A message between a prefill node (the sender of pages) and a decode node (their receiver). On the
 * wire each one also carries its connection's sequence number in its direction (see {@link WireCodec}).
 */
sealed interface WireMessage {

    /** The first message each way: who speaks, and the KV layout its pages have (pools that disagree must not exchange pages). */
    record Hello(int version, String node, KvLayout layout) implements WireMessage {
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
