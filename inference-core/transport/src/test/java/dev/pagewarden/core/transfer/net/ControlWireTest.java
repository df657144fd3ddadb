package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeScaling;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Control messages and control hellos in the KV wire's framing: each one decodes to what was sent, split anywhere. */
class ControlWireTest {
    static final KvLayout LAYOUT = WireFrameTest.LAYOUT;

    static List<WireMessage> everyControlMessage() {
        ControlMessage.Sampling sampling = new ControlMessage.Sampling(0.7f, 0.9f, -42, true);
        ModelConfig llama = new ModelConfig(64, 172, 5, 8, 4, 512, 512, 1e-5f, 10000f, true);
        ModelConfig scaled = new ModelConfig(64, 172, 5, 8, 4, 512, 512, 1e-5f, 500000f, false, Architecture.LLAMA, 8,
                new RopeScaling(new float[] {1f, 2f, 4f, 8f}));
        return List.of(
                new WireMessage.Hello(WireCodec.PROTOCOL_VERSION, "platform", WireMessage.Purpose.CONTROL, null),
                new WireMessage.Hello(WireCodec.PROTOCOL_VERSION, "decode-ä", WireMessage.Purpose.CONTROL, LAYOUT),
                control(new ControlMessage.Submit(7, "tenant-a", new int[] {1, 2, 3, 511}, 24, sampling, "prefill-a",
                        "10.0.0.5", 7400)),
                control(new ControlMessage.Prefill(7, "tenant-a", new int[] {1}, sampling, 1, "decode-a", "::1", 7401)),
                control(new ControlMessage.Prefilled(7, 1, 99, 123_456_789L)),
                control(new ControlMessage.PrefillFailed(7, 1, "prefill_failed", "out of memory", false)),
                control(new ControlMessage.Token(7, 42)),
                control(new ControlMessage.Finished(7, "LENGTH", 24, 1, 2, 3, 4, List.of())),
                control(new ControlMessage.Finished(8, "STOP", 2, 1, 2, 3, 4, List.of(
                        new dev.pagewarden.core.receipt.PageEpochRead("decode-a", 3, 17, 16, 8, 1L << 40 | 5),
                        new dev.pagewarden.core.receipt.PageEpochRead("decode-a", 0, 1, 2, 8, 0)))),
                control(new ControlMessage.Failed(7, ControlMessage.Outcome.INVALID, "prompt/invalid_request", "bad token")),
                control(new ControlMessage.Abort(7, "client went away")),
                control(new ControlMessage.Stop(7)),
                control(new ControlMessage.Status("decode", "decode-a", "stories260K.bin", "cpu", llama, LAYOUT, 512,
                        new ControlMessage.Pool("decode-a", 16, 128, 2048, 9, Map.of("free", 120, "owned", 8)), 3, 2, 40, true)),
                control(new ControlMessage.Status("prefill", "prefill-a", "m", "gpu", scaled, LAYOUT, 256,
                        new ControlMessage.Pool("prefill-a", 16, 64, 1024, 0, Map.of("free", 64)), 0, 0, 65536, false)),
                control(new ControlMessage.Lineage(41, List.of(
                        new LineageEvent(1L << 40 | 7, LineageEvent.Kind.TRANSFER_OUT, 1_700_000_000_000_000L, "prefill-a",
                                "prefill-a", 3, 9, 7, "tenant-ä", -1, -1, "decode-a", 5, 2, 1, 0xCAFEBABE, true),
                        new LineageEvent(2, LineageEvent.Kind.VERIFY, 1, "decode-a", "decode-a", 0, 1, 0, null, -1, -1,
                                null, -1, -1, 0, 0, false)))),
                control(new ControlMessage.Lineage(1, List.of())),
                control(new ControlMessage.LineageAck(42)),
                // version 4: every sampling control, the schema text (longer than a name may be), the cache scope,
                // log probabilities, reused cached pages, the decode headroom
                control(new ControlMessage.Submit(9, "tenant-a", new int[] {1, 2}, 8, everySamplingControl(), "prefill-a",
                        "10.0.0.5", 7400, new ControlMessage.Caching(true, "k".repeat(1500), "chatml"))),
                control(new ControlMessage.Prefill(9, "tenant-a", new int[] {1}, everySamplingControl(), 1, "decode-a",
                        "::1", 7401, new ControlMessage.Caching(true, null, null))),
                control(new ControlMessage.Prefilled(9, 1, 99, 5, logprobs(), 32, List.of(REUSED))),
                control(new ControlMessage.Token(9, 42, logprobs())),
                control(new ControlMessage.Finished(9, "STOP", 2, 1, 2, 3, 4, List.of(), 32, List.of(REUSED, REUSED))),
                control(new ControlMessage.Status("decode", "decode-a", "m", "cpu", llama, LAYOUT, 512,
                        new ControlMessage.Pool("decode-a", 16, 128, 2048, 9, Map.of("free", 120)), 0, 0, 0, true, 1)),
                // version 5: a preempted request's re-prefill names the tokens generated so far
                control(new ControlMessage.Prefill(9, "tenant-a", new int[] {1, 2}, everySamplingControl(), 2, "decode-a",
                        "::1", 7401, ControlMessage.Caching.OFF, new int[] {7, 8, 511})));
    }

    private static final dev.pagewarden.core.receipt.ReusedPage REUSED =
            new dev.pagewarden.core.receipt.ReusedPage("prefill-a", 3, 17, 16, 32, 5, 1L << 40 | 9);

    static ControlMessage.Sampling everySamplingControl() {
        return new ControlMessage.Sampling(0.8f, 0.95f, 7, false, 40, 0.05f, 0.5f, -0.25f, 1.3f,
                Map.of(5, -100f, 17, 2.5f), 3, "schema:{\"type\":\"object\",\"description\":\"" + "ä".repeat(800) + "\"}");
    }

    private static dev.pagewarden.core.sampling.TokenLogprobs logprobs() {
        return new dev.pagewarden.core.sampling.TokenLogprobs(new dev.pagewarden.core.sampling.TokenLogprobs.Logprob(42,
                -0.5f), List.of(new dev.pagewarden.core.sampling.TokenLogprobs.Logprob(42, -0.5f),
                new dev.pagewarden.core.sampling.TokenLogprobs.Logprob(7, -1.25f)));
    }

    private static WireMessage control(ControlMessage m) {
        return new WireMessage.Control(m);
    }

    @Test
    void everyControlMessageRoundTrips() {
        List<WireMessage> sent = everyControlMessage();
        ByteBuf wire = WireFrameTest.encode(sent);
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.MAX_CONTROL_MESSAGE));
        while (wire.isReadable()) {
            in.writeInbound(wire.readRetainedSlice(1));
        }
        wire.release();
        List<WireMessage> got = WireFrameTest.decode(in);
        assertThat(got).hasSameSizeAs(sent);
        for (int i = 0; i < sent.size(); i++) {
            // records holding arrays compare by field content
            assertThat(got.get(i)).as("message %d", i).usingRecursiveComparison().isEqualTo(sent.get(i));
        }
    }

    @Test
    void aKvHelloStillDecodesAsAKvHello() {
        EmbeddedChannel in = new EmbeddedChannel(new WireCodec.Decoder(WireCodec.MAX_CONTROL_FRAME));
        in.writeInbound(WireFrameTest.encode(List.of(new WireMessage.Hello(WireCodec.PROTOCOL_VERSION, "prefill-0", LAYOUT))));
        assertThat(WireFrameTest.decode(in)).singleElement().isInstanceOfSatisfying(WireMessage.Hello.class,
                h -> assertThat(h.purpose()).isEqualTo(WireMessage.Purpose.KV_DATA));
    }
}
