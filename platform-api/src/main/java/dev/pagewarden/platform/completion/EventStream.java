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
 * A streamed response in OpenAI's wire format: each payload becomes {@code data: <payload>} and a
 * blank line. Spring's {@code ServerSentEvent} writer omits the space after the colon, and clients
 * that split on {@code "data: "} then read nothing.
 */
record EventStream(Flux<String> payloads) {

    /** Writes an {@link EventStream} body, flushing each event as it comes (the client cancelling cancels the payloads). */
    static final class Writer implements HttpMessageWriter<EventStream> {
        @Override
        public List<MediaType> getWritableMediaTypes() {
            return List.of(MediaType.TEXT_EVENT_STREAM);
        }

        @Override
        public boolean canWrite(ResolvableType elementType, MediaType mediaType) {
            return EventStream.class.isAssignableFrom(elementType.toClass())
                    && (mediaType == null || MediaType.TEXT_EVENT_STREAM.isCompatibleWith(mediaType));
        }

        @Override
        public Mono<Void> write(Publisher<? extends EventStream> streams, ResolvableType elementType, MediaType mediaType,
                                ReactiveHttpOutputMessage message, Map<String, Object> hints) {
            if (message.getHeaders().getContentType() == null) {
                message.getHeaders().setContentType(MediaType.TEXT_EVENT_STREAM);
            }
            DataBufferFactory buffers = message.bufferFactory();
            return message.writeAndFlushWith(Flux.from(streams).concatMap(EventStream::payloads)
                    .map(payload -> Mono.just(event(buffers, payload))));
        }

        static DataBuffer event(DataBufferFactory buffers, String payload) {
            // a line break inside a payload would end the field: each line is its own data field
            String event = "data: " + payload.replace("\n", "\ndata: ") + "\n\n";
            return buffers.wrap(event.getBytes(StandardCharsets.UTF_8));
        }
    }
}
