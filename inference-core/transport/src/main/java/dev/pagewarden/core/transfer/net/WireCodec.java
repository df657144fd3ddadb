package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.sampling.TokenLogprobs;
import dev.pagewarden.core.transfer.net.WireMessage.Ack;
import dev.pagewarden.core.transfer.net.WireMessage.Control;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
    /**
     * 2: the hello names the connection's purpose (KV data or control), and control messages exist; 3: nodes
     * forward their lineage (LINEAGE, LINEAGE_ACK) and report transfers and lineage backlog in STATUS; 4: SUBMIT
     * and PREFILL carry every sampling control (the response format as its schema text) and the prefix cache scope,
     * TOKEN and PREFILLED log probabilities, PREFILLED and FINISHED the reused cached pages, STATUS the decode
     * headroom; 5: PREFILL carries the tokens a preempted request generated so far (its re-prefill).
     */
    static final int PROTOCOL_VERSION = 5;
    static final int MAX_STRING_BYTES = 1024;
    /** Longest frame of any message but a page: hello, done, ack and the answers. */
    static final int MAX_CONTROL_FRAME = 1 + 8 + 4 + 2 + MAX_STRING_BYTES + 1 + 4 * 4 + 1 + 8;
    /** Longest frame on a control connection: a prompt of up to about four million tokens. */
    static final int MAX_CONTROL_MESSAGE = 16 << 20;
    private static final int MIN_FRAME = 1 + 8;
    private static final byte HELLO = 1, PAGE = 2, DONE = 3, ACK = 4, FRAME_RESULT = 5, DONE_RESULT = 6;
    private static final byte SUBMIT = 16, PREFILL = 17, PREFILLED = 18, PREFILL_FAILED = 19, TOKEN = 20, FINISHED = 21,
            FAILED = 22, ABORT = 23, STOP = 24, STATUS = 25, LINEAGE = 26, LINEAGE_ACK = 27;
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
        ByteBuf b = alloc.buffer(msg instanceof Page p ? PAGE_HEADER + 8 * p.writers().length : MAX_CONTROL_FRAME + 4,
                MAX_CONTROL_MESSAGE + 4);
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
                b.writeByte(h.purpose().ordinal());
                layout(b, h.layout());
            }
            case Control c -> control(b, seq, c.body());
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

    /** A layout as its five fields and its page size in bytes; no layout (a control client's) as zeros. */
    private static void layout(ByteBuf b, KvLayout l) {
        if (l == null) {
            b.writeInt(0).writeInt(0).writeInt(0).writeInt(0).writeByte(0).writeLong(0);
            return;
        }
        b.writeInt(l.nLayers()).writeInt(l.kvDim()).writeInt(l.pageTokens()).writeInt(l.headDim());
        b.writeByte(l.order().ordinal());
        b.writeLong(l.pageBytes());
    }

    private static KvLayout layout(ByteBuf b) {
        int layers = b.readInt(), kvDim = b.readInt(), pageTokens = b.readInt(), headDim = b.readInt();
        int order = b.readByte();
        long pageBytes = b.readLong();
        if (layers == 0 && kvDim == 0 && pageTokens == 0 && headDim == 0 && order == 0 && pageBytes == 0) {
            return null;
        }
        if (order < 0 || order >= KvLayout.Order.values().length) {
            throw new CorruptedFrameException("unknown KV order " + order);
        }
        KvLayout layout;
        try {
            layout = new KvLayout(layers, kvDim, pageTokens, headDim, KvLayout.Order.values()[order]);
        } catch (IllegalArgumentException e) {
            throw new CorruptedFrameException(e.getMessage());
        }
        if (pageBytes != layout.pageBytes()) {
            throw new CorruptedFrameException("hello claims pages of " + pageBytes + " bytes, its layout makes "
                    + layout.pageBytes());
        }
        return layout;
    }

    private static void control(ByteBuf b, long seq, ControlMessage m) {
        switch (m) {
            case ControlMessage.Submit s -> {
                head(b, SUBMIT, seq);
                b.writeLong(s.requestId());
                string(b, s.tenant());
                ints(b, s.prompt());
                b.writeInt(s.maxNewTokens());
                sampling(b, s.sampling());
                string(b, s.prefillNode());
                string(b, s.prefillHost());
                b.writeInt(s.prefillPort());
                caching(b, s.caching());
            }
            case ControlMessage.Prefill p -> {
                head(b, PREFILL, seq);
                b.writeLong(p.requestId());
                string(b, p.tenant());
                ints(b, p.prompt());
                sampling(b, p.sampling());
                b.writeInt(p.generation());
                string(b, p.decodeNode());
                string(b, p.decodeHost());
                b.writeInt(p.decodePort());
                caching(b, p.caching());
                ints(b, p.generated());
            }
            case ControlMessage.Prefilled p -> {
                head(b, PREFILLED, seq);
                b.writeLong(p.requestId()).writeInt(p.generation()).writeInt(p.firstToken()).writeLong(p.prefillNanos());
                logprobs(b, p.logprobs());
                b.writeInt(p.cachedTokens());
                reused(b, p.reused());
            }
            case ControlMessage.PrefillFailed f -> {
                head(b, PREFILL_FAILED, seq);
                b.writeLong(f.requestId()).writeInt(f.generation());
                string(b, f.code());
                text(b, f.message());
                b.writeBoolean(f.pagesSent());
            }
            case ControlMessage.Token t -> {
                head(b, TOKEN, seq);
                b.writeLong(t.requestId()).writeInt(t.token());
                logprobs(b, t.logprobs());
            }
            case ControlMessage.Finished f -> {
                head(b, FINISHED, seq);
                b.writeLong(f.requestId());
                string(b, f.reason());
                b.writeInt(f.outputTokens()).writeLong(f.queuedNanos()).writeLong(f.prefillNanos())
                        .writeLong(f.firstTokenNanos()).writeLong(f.totalNanos());
                b.writeInt(f.reads().size());
                for (PageEpochRead r : f.reads()) {
                    string(b, r.worker());
                    b.writeInt(r.page()).writeLong(r.epoch()).writeInt(r.slots()).writeLong(r.writerRequest())
                            .writeLong(r.lineageEventId());
                }
                b.writeInt(f.cachedTokens());
                reused(b, f.reused());
            }
            case ControlMessage.Failed f -> {
                head(b, FAILED, seq);
                b.writeLong(f.requestId()).writeByte(f.outcome().ordinal());
                string(b, f.code());
                text(b, f.message());
            }
            case ControlMessage.Abort a -> {
                head(b, ABORT, seq);
                b.writeLong(a.requestId());
                text(b, a.reason());
            }
            case ControlMessage.Stop s -> {
                head(b, STOP, seq);
                b.writeLong(s.requestId());
            }
            case ControlMessage.Status s -> {
                head(b, STATUS, seq);
                string(b, s.role());
                string(b, s.node());
                string(b, s.modelId());
                string(b, s.backend());
                model(b, s.model());
                layout(b, s.layout());
                b.writeInt(s.contextWindow());
                ControlMessage.Pool p = s.pool();
                string(b, p.name());
                b.writeInt(p.pageTokens()).writeInt(p.capacityPages()).writeLong(p.capacityTokens()).writeInt(p.peakUsedPages());
                b.writeInt(p.pagesByState().size());
                for (var e : new java.util.TreeMap<>(p.pagesByState()).entrySet()) {
                    string(b, e.getKey());
                    b.writeInt(e.getValue());
                }
                b.writeInt(s.queued()).writeInt(s.transfersInFlight()).writeInt(s.lineageBacklog())
                        .writeBoolean(s.lineageAccepting()).writeInt(s.headroomPages());
            }
            case ControlMessage.Lineage l -> {
                head(b, LINEAGE, seq);
                b.writeLong(l.firstSeq()).writeInt(l.events().size());
                for (LineageEvent e : l.events()) {
                    event(b, e);
                }
            }
            case ControlMessage.LineageAck a -> {
                head(b, LINEAGE_ACK, seq);
                b.writeLong(a.upTo());
            }
        }
    }

    private static void event(ByteBuf b, LineageEvent e) {
        b.writeLong(e.id()).writeByte(e.kind().ordinal()).writeLong(e.timeMicros());
        string(b, e.node());
        optional(b, e.worker());
        b.writeInt(e.page()).writeLong(e.epoch()).writeLong(e.requestId());
        optional(b, e.tenant());
        b.writeInt(e.slotFrom()).writeInt(e.slotTo());
        optional(b, e.peerWorker());
        b.writeInt(e.peerPage()).writeLong(e.peerEpoch()).writeInt(e.generation()).writeInt(e.checksum())
                .writeBoolean(e.ok());
    }

    private static LineageEvent event(ByteBuf b) {
        long id = b.readLong();
        int kind = b.readByte();
        if (kind < 0 || kind >= LineageEvent.Kind.values().length) {
            throw new CorruptedFrameException("unknown lineage event kind " + kind);
        }
        long time = b.readLong();
        String node = string(b);
        String worker = optional(b);
        int page = b.readInt();
        long epoch = b.readLong(), requestId = b.readLong();
        String tenant = optional(b);
        int slotFrom = b.readInt(), slotTo = b.readInt();
        String peerWorker = optional(b);
        int peerPage = b.readInt();
        long peerEpoch = b.readLong();
        int generation = b.readInt(), checksum = b.readInt();
        boolean ok = b.readBoolean();
        try {
            return new LineageEvent(id, LineageEvent.Kind.values()[kind], time, node, worker, page, epoch, requestId,
                    tenant, slotFrom, slotTo, peerWorker, peerPage, peerEpoch, generation, checksum, ok);
        } catch (IllegalArgumentException ex) {
            throw new CorruptedFrameException(ex.getMessage());
        }
    }

    /** A string that may be null: a presence byte, then the string. */
    private static void optional(ByteBuf b, String s) {
        b.writeBoolean(s != null);
        if (s != null) {
            string(b, s);
        }
    }

    private static String optional(ByteBuf b) {
        return b.readBoolean() ? string(b) : null;
    }

    private static ControlMessage control(byte type, ByteBuf b) {
        return switch (type) {
            case SUBMIT -> new ControlMessage.Submit(b.readLong(), string(b), ints(b), b.readInt(), sampling(b), string(b),
                    string(b), b.readInt(), caching(b));
            case PREFILL -> new ControlMessage.Prefill(b.readLong(), string(b), ints(b), sampling(b), b.readInt(), string(b),
                    string(b), b.readInt(), caching(b), ints(b));
            case PREFILLED -> new ControlMessage.Prefilled(b.readLong(), b.readInt(), b.readInt(), b.readLong(), logprobs(b),
                    b.readInt(), reused(b));
            case PREFILL_FAILED -> new ControlMessage.PrefillFailed(b.readLong(), b.readInt(), string(b), text(b),
                    b.readBoolean());
            case TOKEN -> new ControlMessage.Token(b.readLong(), b.readInt(), logprobs(b));
            case FINISHED -> {
                long id = b.readLong();
                String reason = string(b);
                int outputTokens = b.readInt();
                long queued = b.readLong(), prefill = b.readLong(), first = b.readLong(), total = b.readLong();
                int n = b.readInt();
                // a read takes at least 34 bytes on the wire: a count beyond what the frame holds is a lie
                if (n < 0 || 34L * n > b.readableBytes()) {
                    throw new CorruptedFrameException("finished request claims " + n + " page reads");
                }
                java.util.List<PageEpochRead> reads = new java.util.ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    reads.add(new PageEpochRead(string(b), b.readInt(), b.readLong(), b.readInt(), b.readLong(), b.readLong()));
                }
                yield new ControlMessage.Finished(id, reason, outputTokens, queued, prefill, first, total, reads, b.readInt(),
                        reused(b));
            }
            case FAILED -> {
                long id = b.readLong();
                int outcome = b.readByte();
                if (outcome < 0 || outcome >= ControlMessage.Outcome.values().length) {
                    throw new CorruptedFrameException("unknown outcome " + outcome);
                }
                yield new ControlMessage.Failed(id, ControlMessage.Outcome.values()[outcome], string(b), text(b));
            }
            case ABORT -> new ControlMessage.Abort(b.readLong(), text(b));
            case STOP -> new ControlMessage.Stop(b.readLong());
            case STATUS -> {
                String role = string(b), node = string(b), modelId = string(b), backend = string(b);
                ModelConfig model = model(b);
                KvLayout layout = layout(b);
                int window = b.readInt();
                String pool = string(b);
                int pageTokens = b.readInt(), capacityPages = b.readInt();
                long capacityTokens = b.readLong();
                int peak = b.readInt();
                int n = b.readInt();
                if (n < 0 || n > 64) {
                    throw new CorruptedFrameException("status claims " + n + " page states");
                }
                java.util.Map<String, Integer> states = new java.util.LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    states.put(string(b), b.readInt());
                }
                yield new ControlMessage.Status(role, node, modelId, backend, model, layout, window,
                        new ControlMessage.Pool(pool, pageTokens, capacityPages, capacityTokens, peak, states), b.readInt(),
                        b.readInt(), b.readInt(), b.readBoolean(), b.readInt());
            }
            case LINEAGE -> {
                long first = b.readLong();
                int n = b.readInt();
                // an event takes at least 70 bytes on the wire: a count beyond what the frame holds is a lie
                if (n < 0 || 70L * n > b.readableBytes()) {
                    throw new CorruptedFrameException("lineage batch claims " + n + " events");
                }
                java.util.List<LineageEvent> events = new java.util.ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    events.add(event(b));
                }
                yield new ControlMessage.Lineage(first, events);
            }
            case LINEAGE_ACK -> new ControlMessage.LineageAck(b.readLong());
            default -> throw new CorruptedFrameException("unknown message type " + type);
        };
    }

    private static void ints(ByteBuf b, int[] v) {
        b.writeInt(v.length);
        for (int x : v) {
            b.writeInt(x);
        }
    }

    private static int[] ints(ByteBuf b) {
        int n = b.readInt();
        if (n < 0 || 4L * n > b.readableBytes()) {
            throw new CorruptedFrameException("array claims " + n + " ints");
        }
        int[] v = new int[n];
        for (int i = 0; i < n; i++) {
            v[i] = b.readInt();
        }
        return v;
    }

    private static void sampling(ByteBuf b, ControlMessage.Sampling s) {
        b.writeFloat(s.temperature()).writeFloat(s.topP()).writeLong(s.seed()).writeBoolean(s.ignoreEos());
        b.writeInt(s.topK()).writeFloat(s.minP()).writeFloat(s.presencePenalty()).writeFloat(s.frequencyPenalty())
                .writeFloat(s.repetitionPenalty());
        Map<Integer, Float> bias = new TreeMap<>(s.logitBias());
        b.writeInt(bias.size());
        for (Map.Entry<Integer, Float> e : bias.entrySet()) {
            b.writeInt(e.getKey()).writeFloat(e.getValue());
        }
        b.writeInt(s.logprobs());
        b.writeBoolean(s.constraint() != null);
        if (s.constraint() != null) {
            longText(b, s.constraint());
        }
    }

    private static ControlMessage.Sampling sampling(ByteBuf b) {
        float temperature = b.readFloat(), topP = b.readFloat();
        long seed = b.readLong();
        boolean ignoreEos = b.readBoolean();
        int topK = b.readInt();
        float minP = b.readFloat(), presence = b.readFloat(), frequency = b.readFloat(), repetition = b.readFloat();
        int n = b.readInt();
        if (n < 0 || 8L * n > b.readableBytes()) {
            throw new CorruptedFrameException("logit bias claims " + n + " entries");
        }
        Map<Integer, Float> bias = new HashMap<>();
        for (int i = 0; i < n; i++) {
            bias.put(b.readInt(), b.readFloat());
        }
        int logprobs = b.readInt();
        String constraint = b.readBoolean() ? longText(b) : null;
        return new ControlMessage.Sampling(temperature, topP, seed, ignoreEos, topK, minP, presence, frequency, repetition,
                bias, logprobs, constraint);
    }

    private static void caching(ByteBuf b, ControlMessage.Caching c) {
        b.writeBoolean(c.enabled());
        b.writeBoolean(c.key() != null);
        if (c.key() != null) {
            longText(b, c.key());
        }
        optional(b, c.template());
    }

    private static ControlMessage.Caching caching(ByteBuf b) {
        boolean enabled = b.readBoolean();
        String key = b.readBoolean() ? longText(b) : null;
        return new ControlMessage.Caching(enabled, key, optional(b));
    }

    /** Log probabilities that may be absent: a presence byte, the chosen token's, then the alternatives'. */
    private static void logprobs(ByteBuf b, TokenLogprobs lp) {
        b.writeBoolean(lp != null);
        if (lp != null) {
            b.writeInt(lp.chosen().token()).writeFloat(lp.chosen().logprob()).writeInt(lp.top().size());
            for (TokenLogprobs.Logprob l : lp.top()) {
                b.writeInt(l.token()).writeFloat(l.logprob());
            }
        }
    }

    private static TokenLogprobs logprobs(ByteBuf b) {
        if (!b.readBoolean()) {
            return null;
        }
        TokenLogprobs.Logprob chosen = new TokenLogprobs.Logprob(b.readInt(), b.readFloat());
        int n = b.readInt();
        if (n < 0 || 8L * n > b.readableBytes()) {
            throw new CorruptedFrameException("log probabilities claim " + n + " alternatives");
        }
        List<TokenLogprobs.Logprob> top = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            top.add(new TokenLogprobs.Logprob(b.readInt(), b.readFloat()));
        }
        return new TokenLogprobs(chosen, top);
    }

    private static void reused(ByteBuf b, List<ReusedPage> pages) {
        b.writeInt(pages.size());
        for (ReusedPage r : pages) {
            string(b, r.worker());
            b.writeInt(r.page()).writeLong(r.epoch()).writeInt(r.positionFrom()).writeInt(r.positionTo())
                    .writeLong(r.writerRequest()).writeLong(r.lineageEventId());
        }
    }

    private static List<ReusedPage> reused(ByteBuf b) {
        int n = b.readInt();
        // a reused page takes at least 38 bytes on the wire: a count beyond what the frame holds is a lie
        if (n < 0 || 38L * n > b.readableBytes()) {
            throw new CorruptedFrameException("message claims " + n + " reused pages");
        }
        List<ReusedPage> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            try {
                out.add(new ReusedPage(string(b), b.readInt(), b.readLong(), b.readInt(), b.readInt(), b.readLong(),
                        b.readLong()));
            } catch (IllegalArgumentException e) {
                throw new CorruptedFrameException(e.getMessage());
            }
        }
        return out;
    }

    /** A text of any length the frame holds (a schema, a prompt cache key): its byte count, then its UTF-8 bytes. */
    private static void longText(ByteBuf b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        b.writeInt(bytes.length).writeBytes(bytes);
    }

    private static String longText(ByteBuf b) {
        int n = b.readInt();
        if (n < 0 || n > b.readableBytes()) {
            throw new CorruptedFrameException("text claims " + n + " bytes");
        }
        byte[] bytes = new byte[n];
        b.readBytes(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void model(ByteBuf b, ModelConfig m) {
        b.writeInt(m.dim()).writeInt(m.hiddenDim()).writeInt(m.nLayers()).writeInt(m.nHeads()).writeInt(m.nKvHeads())
                .writeInt(m.vocabSize()).writeInt(m.seqLen()).writeFloat(m.rmsEps()).writeFloat(m.ropeTheta())
                .writeBoolean(m.sharedClassifier()).writeByte(m.architecture().ordinal()).writeInt(m.headSize());
        float[] factors = m.ropeScaling() == null ? null : m.ropeScaling().factors();
        b.writeInt(factors == null ? -1 : factors.length);
        if (factors != null) {
            for (float f : factors) {
                b.writeFloat(f);
            }
        }
    }

    private static ModelConfig model(ByteBuf b) {
        int dim = b.readInt(), hidden = b.readInt(), layers = b.readInt(), heads = b.readInt(), kvHeads = b.readInt();
        int vocab = b.readInt(), seqLen = b.readInt();
        float eps = b.readFloat(), theta = b.readFloat();
        boolean shared = b.readBoolean();
        int arch = b.readByte();
        int headSize = b.readInt();
        int n = b.readInt();
        if (arch < 0 || arch >= Architecture.values().length || n < -1 || 4L * n > b.readableBytes()) {
            throw new CorruptedFrameException("model configuration with architecture " + arch + " and " + n + " RoPE factors");
        }
        RopeScaling scaling = null;
        if (n >= 0) {
            float[] f = new float[n];
            for (int i = 0; i < n; i++) {
                f[i] = b.readFloat();
            }
            scaling = new RopeScaling(f);
        }
        try {
            return new ModelConfig(dim, hidden, layers, heads, kvHeads, vocab, seqLen, eps, theta, shared,
                    Architecture.values()[arch], headSize, scaling);
        } catch (IllegalArgumentException e) {
            throw new CorruptedFrameException(e.getMessage());
        }
    }

    /** A message text: like a name, but cut to what fits rather than refused. */
    private static void text(ByteBuf b, String s) {
        String t = s == null ? "" : s;
        while (t.getBytes(StandardCharsets.UTF_8).length > MAX_STRING_BYTES) {
            t = t.substring(0, Math.min(t.length() - 1, MAX_STRING_BYTES - 3)) ;
        }
        string(b, t);
    }

    private static String text(ByteBuf b) {
        return string(b);
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
                int purpose = b.readByte();
                if (purpose < 0 || purpose >= WireMessage.Purpose.values().length) {
                    throw new CorruptedFrameException("unknown connection purpose " + purpose);
                }
                yield new Hello(version, node, WireMessage.Purpose.values()[purpose], layout(b));
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
            default -> new WireMessage.Control(control(type, b));
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
        private volatile int maxFrame;
        private long expected;
        private boolean failed;

        Decoder(int maxFrame) {
            this.maxFrame = maxFrame;
        }

        /** A connection that turned out to be a control connection takes longer frames (prompts) than its hello. */
        void maxFrame(int max) {
            this.maxFrame = max;
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
