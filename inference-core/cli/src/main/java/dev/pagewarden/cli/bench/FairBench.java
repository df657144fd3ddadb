package dev.pagewarden.cli.bench;

import dev.pagewarden.cli.bench.http.Percentiles;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.sampling.SamplingParams;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fair admission under a flood: tenant A keeps {@code streams} long generations going back to back, tenant B sends one
 * short request every {@code interval}; B's time to first token is compared with B alone on an idle engine. The decode
 * pool holds about half of A's streams and a little more, so A's queue is never empty while B's short request would
 * fit: in arrival order B waits behind A's head for one of A's long generations to end; by service it goes first.
 * A third run sends B's requests as tenant A, which is what arrival order alone gives B.
 */
public final class FairBench {

    /** What to run. */
    public record Options(int streams, int aPrompt, int aGen, int bPrompt, int bGen, int bRequests, long intervalMillis,
                          int decodePoolTokens, String backend, int threads) {
        public Options {
            if (streams < 1 || aPrompt < 1 || aGen < 1 || bPrompt < 1 || bGen < 1 || bRequests < 1 || intervalMillis < 1) {
                throw new IllegalArgumentException("bench-fair needs streams, token counts, requests and interval >= 1");
            }
        }
    }

    /** B's times to first token in one run, in milliseconds, and the tokens A was served meanwhile. */
    private record Run(long[] ttftMicros, long aTokens) {
        Map<String, Object> report() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("b_ttft_p50_ms", Percentiles.of(ttftMicros, 50) / 1000);
            m.put("b_ttft_p99_ms", Percentiles.of(ttftMicros, 99) / 1000);
            m.put("b_ttft_max_ms", Percentiles.of(ttftMicros, 100) / 1000);
            m.put("a_tokens", aTokens);
            return m;
        }
    }

    public static Map<String, Object> run(LoadedModel model, Options o, PrintStream progress) throws Exception {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("streams", o.streams());
        report.put("a_request_tokens", o.aPrompt() + "+" + o.aGen());
        report.put("b_request_tokens", o.bPrompt() + "+" + o.bGen());
        report.put("b_requests", o.bRequests());
        report.put("interval_ms", o.intervalMillis());
        report.put("decode_pool_tokens", o.decodePoolTokens());
        progress.println("B alone on an idle engine...");
        Run alone = run(model, o, false, null);
        progress.println("B (tenant b) while A floods...");
        Run fair = run(model, o, true, "b");
        progress.println("B's requests sent as tenant A while A floods (arrival order)...");
        Run sameTenant = run(model, o, true, "a");
        report.put("alone", alone.report());
        report.put("fair", fair.report());
        report.put("as_tenant_a", sameTenant.report());
        double base = Percentiles.of(alone.ttftMicros(), 99);
        report.put("fair_p99_vs_alone", Percentiles.of(fair.ttftMicros(), 99) / base);
        report.put("as_tenant_a_p99_vs_alone", Percentiles.of(sameTenant.ttftMicros(), 99) / base);
        return report;
    }

    private static Run run(LoadedModel model, Options o, boolean flood, String bTenant) throws Exception {
        EngineConfig config = EngineConfig.builder().backend(o.backend()).threads(o.threads())
                .poolTokens(Math.max(o.decodePoolTokens(), 1024), o.decodePoolTokens()).build();
        SplittableRandom rnd = new SplittableRandom(7);
        int vocab = model.config().vocabSize();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong aTokens = new AtomicLong();
        List<RequestHandle> aRunning = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> streams = new ArrayList<>();
        try (Engine engine = Engine.builder(model, config).build()) {
            // warm the engine's code paths before timing anything
            for (int i = 0; i < 3; i++) {
                engine.submit(request("b", o.bPrompt(), o.bGen(), vocab, rnd), (id, t) -> { }).result().get(1, TimeUnit.MINUTES);
            }
            if (flood) {
                for (int s = 0; s < o.streams(); s++) {
                    SplittableRandom own = rnd.split();
                    streams.add(Thread.ofVirtual().start(() -> {
                        while (!stop.get()) {
                            RequestHandle h = engine.submit(request("a", o.aPrompt(), o.aGen(), vocab, own),
                                    (id, t) -> aTokens.incrementAndGet());
                            aRunning.add(h);
                            try {
                                h.result().get(10, TimeUnit.MINUTES);
                            } catch (Exception e) {
                                // aborted at the end of the run
                            }
                            aRunning.remove(h);
                        }
                    }));
                }
                // let A fill the pool and its queue before B's first request
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (System.nanoTime() < until && engine.queued() == 0) {
                    Thread.sleep(10);
                }
            }
            long[] ttft = new long[o.bRequests()];
            List<CompletableFuture<?>> results = new ArrayList<>();
            long next = System.nanoTime();
            for (int i = 0; i < o.bRequests(); i++) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                next += TimeUnit.MILLISECONDS.toNanos(o.intervalMillis());
                int slot = i;
                long start = System.nanoTime();
                boolean[] first = {true};
                results.add(engine.submit(request(bTenant == null ? "b" : bTenant, o.bPrompt(), o.bGen(), vocab, rnd),
                        (id, t) -> {
                            if (first[0]) {
                                first[0] = false;
                                ttft[slot] = (System.nanoTime() - start) / 1000;
                            }
                        }).result());
            }
            for (CompletableFuture<?> r : results) {
                r.get(10, TimeUnit.MINUTES);
            }
            stop.set(true);
            synchronized (aRunning) {
                aRunning.forEach(h -> h.abort("benchmark over"));
            }
            for (Thread t : streams) {
                t.join();
            }
            return new Run(ttft, aTokens.get());
        }
    }

    private static GenerationRequest request(String tenant, int promptTokens, int gen, int vocab, SplittableRandom rnd) {
        int[] prompt = new int[promptTokens];
        prompt[0] = 1;
        for (int t = 1; t < promptTokens; t++) {
            prompt[t] = 3 + rnd.nextInt(vocab - 3);
        }
        // greedy, ignoring end-of-text: every generation is exactly as long as asked
        return new GenerationRequest(tenant, prompt, gen, new SamplingParams(0f, 1f, 0, true));
    }

    private FairBench() {
    }
}
