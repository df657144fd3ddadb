package dev.pagewarden.platform.audit;

import dev.pagewarden.platform.database.DatabaseAvailability;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import java.time.Duration;

/**
 * Writes the {@code requests} row of each finished request off the event loop (JPA is blocking), on a few
 * threads of its own so that a database that hangs cannot take the shared scheduler's threads from request
 * work. While PostgreSQL is away the write is retried in the background (the answer does not wait);
 * the page-level audit trail itself never depends on this: it goes through the fsynced journal.
 */
@Component
public class RequestRecorder implements DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(RequestRecorder.class);
    /** About an hour of retries at the 10 s cap; after that the row is given up, loudly. */
    private static final long MAX_RETRIES = 400;

    private final RequestRecordRepository repository;
    private final DatabaseAvailability database;
    private final Scheduler writers = Schedulers.newBoundedElastic(4, 100_000, "request-recorder");

    public RequestRecorder(RequestRecordRepository repository, DatabaseAvailability database) {
        this.repository = repository;
        this.database = database;
    }

    /**
     * Saves in the background. The returned Mono completes with the first attempt (the answer waits on
     * it briefly), or at once when the database is known to be down; a failed first attempt goes on being
     * retried here, not by the caller.
     */
    public Mono<RequestRecord> record(RequestRecord record) {
        Mono<RequestRecord> attempt = Mono.fromCallable(() -> save(record)).subscribeOn(writers);
        boolean wait = !database.knownDown();
        Mono<RequestRecord> save = wait ? attempt.cache() : Mono.error(new IllegalStateException("database known down"));
        save.onErrorResume(first -> {
                    LOG.warn("could not record request {} yet ({}); retrying in the background", record.id(),
                            first.getMessage());
                    return attempt.retryWhen(Retry.backoff(MAX_RETRIES, Duration.ofMillis(200))
                            .maxBackoff(Duration.ofSeconds(10)));
                })
                .subscribe(r -> { }, e -> LOG.error("request {} was not recorded: {}", record.id(), e.getMessage()));
        return wait ? save : Mono.just(record);
    }

    private RequestRecord save(RequestRecord record) {
        return database.call(() -> repository.save(record));
    }

    @Override
    public void destroy() {
        writers.dispose();
    }
}
