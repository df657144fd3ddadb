package dev.pagewarden.platform.audit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.concurrent.atomic.AtomicInteger;

/** Writes the {@code requests} row of each finished request off the event loop (JPA is blocking). */
@Component
public class RequestRecorder {
    private static final Logger LOG = LoggerFactory.getLogger(RequestRecorder.class);

    private final RequestRecordRepository repository;
    private final AtomicInteger pending = new AtomicInteger();

    public RequestRecorder(RequestRecordRepository repository) {
        this.repository = repository;
    }

    /** Saves in the background; the returned Mono completes when the row is written (tests wait on it). */
    public Mono<RequestRecord> record(RequestRecord record) {
        pending.incrementAndGet();
        return Mono.fromCallable(() -> repository.save(record))
                .subscribeOn(Schedulers.boundedElastic())
                .doOnError(e -> LOG.error("could not record request {}: {}", record.id(), e.getMessage()))
                .doFinally(s -> pending.decrementAndGet())
                .cache();
    }

    public int pending() {
        return pending.get();
    }
}
