package dev.pagewarden.core.admission;

import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sequence.AdmissionView;
import dev.pagewarden.core.spi.EngineMetrics;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class FairQueueTest {
    private static long ids;

    /** A waiting request as admission sees it; remembers a refusal. */
    static final class Req implements AdmissionView {
        final long id = ++ids;
        final GenerationRequest request;
        String refusal;

        Req(String tenant, int prompt, int generate, int weight) {
            int[] p = new int[prompt];
            java.util.Arrays.fill(p, 1);
            this.request = new GenerationRequest(tenant, p, generate, SamplingParams.greedy(), weight);
        }

        public long id() { return id; }
        public String tenant() { return request.tenant(); }
        public GenerationRequest request() { return request; }
        public boolean abortRequested() { return false; }
        public void moveTo(RequestState next) { }
        public void abortNow() { }
        public void decodePages(List<PageRef> pages, long nowNanos) { }
        public List<PageRef> takeDecodePages() { return List.of(); }
        public void admissionOrder(long order) { }
        public long admissionOrder() { return id; }
        public int prefillLength() { return request.promptLength(); }
        public int preemptions() { return 0; }
        public void reject(String code, String message) { refusal = code + ": " + message; }

        @Override
        public String toString() {
            return tenant() + "#" + id;
        }
    }

    /**
     * Admits {@code n} requests one after the other, each served in full at once, each tenant kept backlogged (two
     * waiting: a tenant whose queue runs empty is lifted when it comes back); tokens served per tenant.
     */
    private static Map<String, Long> run(FairQueue<Req> q, int n, Map<String, Supplier<Req>> refill) {
        Map<String, Long> served = new HashMap<>();
        for (int i = 0; i < n; i++) {
            Req r = q.poll();
            q.admitted(r);
            q.served(r.tenant(), r.request.maxNewTokens());
            served.merge(r.tenant(), (long) r.request.promptLength() + r.request.maxNewTokens(), Long::sum);
            q.add(refill.get(r.tenant()).get());
        }
        return served;
    }

    @Test
    void backloggedTenantsAreServedTokensInProportionToTheirWeights() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        // different request sizes on purpose: the share is in tokens, not in requests
        Map<String, Supplier<Req>> refill = Map.of(
                "a", () -> new Req("a", 10, 90, 1),
                "b", () -> new Req("b", 5, 15, 3),
                "c", () -> new Req("c", 40, 10, 2));
        refill.values().forEach(s -> { q.add(s.get()); q.add(s.get()); });
        Map<String, Long> served = run(q, 6000, refill);
        double total = served.values().stream().mapToLong(Long::longValue).sum();
        assertThat(served.get("a") / total).isCloseTo(1.0 / 6, within(0.01));
        assertThat(served.get("b") / total).isCloseTo(3.0 / 6, within(0.01));
        assertThat(served.get("c") / total).isCloseTo(2.0 / 6, within(0.01));
    }

    @Test
    void equalWeightsShareTokensEquallyWhateverTheRequestSizes() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        Map<String, Supplier<Req>> refill = Map.of("big", () -> new Req("big", 100, 400, 1),
                "small", () -> new Req("small", 4, 16, 1));
        refill.values().forEach(s -> { q.add(s.get()); q.add(s.get()); });
        Map<String, Long> served = run(q, 5000, refill);
        assertThat((double) served.get("big") / served.get("small")).isCloseTo(1.0, within(0.05));
    }

    @Test
    void aTenantThatWasIdleBanksNoCredit() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        Map<String, Supplier<Req>> refill = Map.of("a", () -> new Req("a", 10, 10, 1), "b", () -> new Req("b", 10, 10, 1));
        q.add(refill.get("a").get());
        run(q, 1000, refill); // a alone: 20,000 tokens while b was idle
        q.add(refill.get("b").get());
        assertThat(q.counter("b")).isEqualTo(q.counter("a"));
        List<String> next = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Req r = q.poll();
            next.add(r.tenant());
            q.admitted(r);
            q.served(r.tenant(), r.request.maxNewTokens());
            q.add(refill.get(r.tenant()).get());
        }
        // turns alternate from the moment b comes back, instead of b taking the next thousand
        assertThat(next.stream().filter("b"::equals).count()).isEqualTo(10);
    }

    @Test
    void aTenantArrivingWhenNobodyWaitsStartsAtTheLastAdmittedCounter() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        Req early = new Req("b", 10, 10, 1);
        q.admittedAtOnce(early);
        q.served("b", 10);
        for (int i = 0; i < 50; i++) {
            Req a = new Req("a", 10, 10, 1);
            q.admittedAtOnce(a);
            q.served("a", 10);
        }
        double lastChosenAt = q.counter("a") - 20;
        Req b = new Req("b", 10, 10, 1);
        q.add(b);
        assertThat(q.counter("b")).isEqualTo(lastChosenAt);
    }

    @Test
    void aTenantBackFromIdleGoesBeforeOneWhoseRequestsAreRunningAtTheSameCounter() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        q.admittedAtOnce(new Req("a", 10, 100, 1));
        q.served("a", 5);
        Req a2 = new Req("a", 10, 100, 1);
        q.add(a2);
        Req b = new Req("b", 1, 1, 1);
        q.add(b);
        assertThat(q.counter("b")).isEqualTo(q.counter("a"));
        assertThat(q.peek()).isSameAs(b);
    }

    @Test
    void eachTenantIsServedInItsOwnArrivalOrder() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        List<Req> a = List.of(new Req("a", 1, 1, 1), new Req("a", 50, 50, 1), new Req("a", 1, 1, 1));
        List<Req> b = List.of(new Req("b", 30, 1, 1), new Req("b", 1, 1, 1));
        a.forEach(q::add);
        b.forEach(q::add);
        List<Req> order = new ArrayList<>();
        while (!q.isEmpty()) {
            Req r = q.poll();
            q.admitted(r);
            order.add(r);
        }
        assertThat(order.stream().filter(r -> r.tenant().equals("a")).toList()).containsExactlyElementsOf(a);
        assertThat(order.stream().filter(r -> r.tenant().equals("b")).toList()).containsExactlyElementsOf(b);
    }

    @Test
    void aRequeuedRequestGoesFirstAmongItsTenants() {
        FairQueue<Req> q = new FairQueue<>(EngineMetrics.NONE);
        Req a1 = new Req("a", 1, 1, 1), a2 = new Req("a", 1, 1, 1), back = new Req("a", 1, 1, 1);
        q.add(a1);
        q.add(a2);
        q.requeueFront(back);
        assertThat(q.size()).isEqualTo(3);
        assertThat(q.poll()).isSameAs(back);
        assertThat(q.poll()).isSameAs(a1);
    }

    @Test
    void removeTakesOutExactlyThatRequest() {
        List<String> depths = new ArrayList<>();
        FairQueue<Req> q = new FairQueue<>(new EngineMetrics() {
            @Override
            public void tenantQueued(String tenant, int depth) {
                depths.add(tenant + "=" + depth);
            }
        });
        Req a1 = new Req("a", 1, 1, 1), a2 = new Req("a", 1, 1, 1), b1 = new Req("b", 1, 1, 1);
        q.add(a1);
        q.add(a2);
        q.add(b1);
        assertThat(q.remove(a2)).isTrue();
        assertThat(q.remove(a2)).isFalse();
        assertThat(q.size()).isEqualTo(2);
        assertThat(q.queued("a")).isEqualTo(1);
        List<Req> left = new ArrayList<>();
        while (!q.isEmpty()) {
            left.add(q.poll());
        }
        assertThat(left).containsExactlyInAnyOrder(a1, b1);
        assertThat(depths).containsExactly("a=1", "a=2", "b=1", "a=1", depths.get(4), depths.get(5));
        assertThat(depths.subList(4, 6)).containsExactlyInAnyOrder("a=0", "b=0");
    }

    /** Room for {@code capacity} tokens; what it reserved, in order. */
    static final class Room implements Admission.Placement<Req> {
        long free;
        final List<Req> started = new ArrayList<>();

        Room(long capacity) {
            free = capacity;
        }

        @Override
        public Admission.Room reserve(Req seq) {
            long need = Admission.tokensNeeded(seq.request());
            if (need > free) {
                return new Admission.Room.Wait();
            }
            free -= need;
            return new Admission.Room.Reserved();
        }

        @Override
        public void start(Req seq) {
            started.add(seq);
        }

        @Override
        public void release(Req seq) {
            free += Admission.tokensNeeded(seq.request());
        }
    }

    private static Admission<Req> admission(Room room, int maxQueue) {
        Admission.Limits limits = new Admission.Limits(512, 512, 512, 512, maxQueue, false);
        return new Admission<>(room, () -> limits, () -> true, EngineMetrics.NONE);
    }

    @Test
    void theQueueBoundHoldsAcrossTenantsWithTheSameRefusal() {
        Room room = new Room(0);
        Admission<Req> admission = admission(room, 3);
        List<Req> reqs = List.of(new Req("a", 1, 1, 1), new Req("b", 1, 1, 1), new Req("a", 1, 1, 1),
                new Req("c", 1, 1, 1));
        reqs.forEach(admission::submit);
        assertThat(admission.queued()).isEqualTo(3);
        assertThat(reqs.subList(0, 3)).allSatisfy(r -> assertThat(r.refusal).isNull());
        assertThat(reqs.get(3).refusal).isEqualTo("overloaded: the admission queue is full (3 waiting); retry later");
    }

    @Test
    void aShortRequestThatFitsGoesInAtOnceWhileAFloodingTenantsHeadWaitsForRoom() {
        Room room = new Room(100);
        Admission<Req> admission = admission(room, 10);
        Req running = new Req("a", 40, 40, 1);
        admission.submit(running); // 80 reserved, 20 left
        admission.charging("a", (id, token) -> { }).onToken(running.id(), 7);
        Req next = new Req("a", 40, 40, 1);
        admission.submit(next); // waits for room
        Req shortOne = new Req("b", 5, 5, 1);
        admission.submit(shortOne);
        assertThat(room.started).containsExactly(running, shortOne);
        assertThat(admission.queued()).isEqualTo(1);
    }

    @Test
    void theChosenRequestThatDoesNotFitHoldsBackSmallerOnes() {
        Room room = new Room(100);
        Admission<Req> admission = admission(room, 10);
        Req running = new Req("a", 50, 50, 1);
        admission.submit(running); // reserves at once: all the room
        Req big = new Req("b", 40, 40, 1);
        admission.submit(big); // b has been served nothing: the least served of those waiting
        Req small = new Req("a", 1, 1, 1);
        admission.submit(small);
        room.free += 10; // room for small, not for big
        admission.pagesFreed();
        assertThat(room.started).containsExactly(running);
        admission.release(running);
        assertThat(room.started).containsExactly(running, big, small);
    }
}
