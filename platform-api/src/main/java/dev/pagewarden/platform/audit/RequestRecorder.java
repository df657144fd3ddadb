package dev.pagewarden.platform.audit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import java.time.Duration;


/**
 * Writes the {@code requests} row of each finished request off the event loop (JPA is blocking).
 * While PostgreSQL is away the write is retried in the background (the answer does not wait);
 * the page-level audit trail itself never depends on this: it goes through the fsynced journal.
 */
@Component
public class RequestRecorder {
    private static final Logger LOG = LoggerFactory.getLogger(RequestRecorder.class);
    /** About an hour of retries at the 10 s cap; after that the row is given up, loudly. */
    private static final long MAX_RETRIES = 400;

    private final RequestRecordRepository repository;

    public RequestRecorder(RequestRecordRepository repository) {
        this.repository = repository;
    }

    /**
     * Saves in the background. The returned Mono completes with the first attempt (the answer waits on
     * it briefly); a failed first attempt goes on being retried here, not by the caller.
     */
    public Mono<RequestRecord> record(RequestRecord record) {
        Mono<RequestRecord> attempt = Mono.fromCallable(() -> repository.save(record))
                .subscribeOn(Schedulers.boundedElastic());
        Mono<RequestRecord> save = attempt.cache();
        save.onErrorResume(first -> {
                    LOG.warn("could not record request {} yet ({}); retrying in the background", record.id(),
                            first.getMessage());
                    return attempt.retryWhen(Retry.backoff(MAX_RETRIES, Duration.ofMillis(200))
                            .maxBackoff(Duration.ofSeconds(10)));
                })
                .subscribe(r -> { }, e -> LOG.error("request {} was not recorded: {}", record.id(), e.getMessage()));
        return save;
    }
}
