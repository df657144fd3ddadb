package dev.pagewarden.platform.completion;

import org.junit.jupiter.api.Test;
import org.springframework.core.ResolvableType;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The wire format of a stream, byte for byte, without a server. */
class EventStreamTest {

    private static MockServerHttpResponse write(String... payloads) {
        MockServerHttpResponse response = new MockServerHttpResponse();
        new EventStream.Writer().write(Mono.just(new EventStream(Flux.just(payloads))),
                ResolvableType.forClass(EventStream.class), MediaType.TEXT_EVENT_STREAM, response, Map.of())
                .block(Duration.ofSeconds(10));
        return response;
    }

    @Test
    void eachPayloadIsOneDataLineWithASpaceThenABlankLine() {
        MockServerHttpResponse response = write("{\"a\":1}", "[DONE]");
        assertThat(response.getBodyAsString().block(Duration.ofSeconds(10))).isEqualTo("data: {\"a\":1}\n\ndata: [DONE]\n\n");
        assertThat(response.getHeaders().getContentType()).isEqualTo(MediaType.TEXT_EVENT_STREAM);
    }

    @Test
    void aLineBreakInAPayloadStartsAnotherDataFieldOfTheSameEvent() {
        assertThat(write("one\ntwo").getBodyAsString().block(Duration.ofSeconds(10))).isEqualTo("data: one\ndata: two\n\n");
    }

    @Test
    void onlyEventStreamsAreWrittenAndOnlyAsAnEventStream() {
        EventStream.Writer writer = new EventStream.Writer();
        assertThat(writer.canWrite(ResolvableType.forClass(EventStream.class), MediaType.TEXT_EVENT_STREAM)).isTrue();
        assertThat(writer.canWrite(ResolvableType.forClass(EventStream.class), null)).isTrue();
        assertThat(writer.canWrite(ResolvableType.forClass(EventStream.class), MediaType.APPLICATION_JSON)).isFalse();
        assertThat(writer.canWrite(ResolvableType.forClass(Object.class), null)).as("never a catch-all writer").isFalse();
        assertThat(writer.canWrite(ResolvableType.forClass(String.class), MediaType.TEXT_EVENT_STREAM)).isFalse();
    }
}
