package dev.pagewarden.incident;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.concurrent.Callable;

/** JDBC and engine calls are blocking: run them on the bounded elastic scheduler, never the event loop. */
public final class Blocking {
    private Blocking() {
    }

    public static <T> Mono<T> call(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    public static Mono<Void> run(Runnable run) {
        return Mono.<Void>fromRunnable(run).subscribeOn(Schedulers.boundedElastic());
    }
}
