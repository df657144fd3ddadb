package dev.pagewarden.platform.completion;

import org.reactivestreams.Publisher;
import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.http.codec.HttpMessageWriter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * A Responses API stream: typed events, each {@code event: <type>} then its {@code data: } lines as
 * {@link EventStream} writes them, and no {@code [DONE]} (OpenAI ends these streams with the terminal event).
 */
record ResponseEventStream(Flux<Event> events) {

    /** One event: its type (also the payload's {@code type} field) and the JSON payload. */
    record Event(String type, String payload) {
    }

    static final class Writer implements HttpMessageWriter<ResponseEventStream> {
        @Override
        public List<MediaType> getWritableMediaTypes() {
            return List.of(MediaType.TEXT_EVENT_STREAM);
        }

        @Override
        public boolean canWrite(ResolvableType elementType, MediaType mediaType) {
            return ResponseEventStream.class.isAssignableFrom(elementType.toClass())
                    && (mediaType == null || MediaType.TEXT_EVENT_STREAM.isCompatibleWith(mediaType));
        }

        @Override
        public Mono<Void> write(Publisher<? extends ResponseEventStream> streams, ResolvableType elementType,
                                MediaType mediaType, ReactiveHttpOutputMessage message, Map<String, Object> hints) {
            if (message.getHeaders().getContentType() == null) {
                message.getHeaders().setContentType(MediaType.TEXT_EVENT_STREAM);
            }
            DataBufferFactory buffers = message.bufferFactory();
            return message.writeAndFlushWith(Flux.from(streams).concatMap(ResponseEventStream::events)
                    .map(e -> Mono.just(event(buffers, e))));
        }

        static DataBuffer event(DataBufferFactory buffers, Event e) {
            byte[] name = ("event: " + e.type() + "\n").getBytes(StandardCharsets.UTF_8);
            DataBuffer data = EventStream.Writer.event(buffers, e.payload());
            return buffers.join(List.of(buffers.wrap(name), data));
        }
    }
}
