package dev.pagewarden.lab;

import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.faultlab.Replay;
import dev.pagewarden.core.faultlab.ReplayTarget;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A scenario's workload through a RUNNING engine that an application built with a lab engine's hooks
 * (its faults are the engine's own; the lab does not build it). The workload is {@link LabWorkload}'s, as
 * in {@link ReplayLab}: normal traffic from four tenants, prompts over the pool capacity, more normal
 * traffic (the abort-during-transfer rounds need a stepped engine and run only in {@link ReplayLab}); for the
 * prefix cache scenarios, the rounds of tenants' system prompts in place of the over-capacity prompts.
 * The ground truth is the oracle's, counted by {@link LabTally}.
 */
final class EngineReplay {
    /** The workload's seed, so a replay sends the same traffic every time. */
    static final long SEED = 2026;

    private final IsolationOracle oracle;

    EngineReplay(IsolationOracle oracle) {
        this.oracle = oracle;
    }

    private record Sent(String tenant, RequestHandle handle, int promptTokens, Instant received) {
    }

    Replay run(ReplayLab.Scenario scenario, ReplayTarget target) throws InterruptedException {
        Instant started = Instant.now();
        List<Sent> sent = new ArrayList<>();
        LabWorkload workload = new LabWorkload(target.encode());
        SplittableRandom rnd = new SplittableRandom(SEED);
        if (scenario.prefixCache()) {
            // as ReplayLab's prefix cache scenarios (the engine's prefix cache is the application's setting)
            sent.addAll(submit(target, workload.normalWave(rnd, 2)));
            await(sent);
            for (int round = 0; round < LabWorkload.PREFIX_ROUNDS; round++) {
                sent.addAll(submit(target, workload.prefixWave(round)));
                await(sent);
            }
        } else {
            sent.addAll(submit(target, workload.normalWave(rnd, 3)));
            await(sent);
            sent.addAll(submit(target, workload.overCapacityWave()));
            await(sent);
        }
        sent.addAll(submit(target, workload.normalWave(rnd, 1)));
        await(sent);
        LabTally tally = new LabTally(oracle);
        TreeSet<String> readerTenants = new TreeSet<>();
        TreeSet<String> exposedTenants = new TreeSet<>();
        List<Replay.Sent> requests = new ArrayList<>();
        for (Sent s : sent) {
            RequestHandle h = s.handle();
            if (oracle.crossTenantSlots(h.id()) > 0) {
                readerTenants.add(s.tenant());
                for (long writer : oracle.foreignWriters(h.id())) {
                    exposedTenants.add(String.valueOf(oracle.tenantOf(writer)));
                }
            }
            LabTally.Outcome outcome = tally.add(h);
            Replay.Outcome kind = switch (outcome.kind()) {
                case SERVED -> Replay.Outcome.SERVED;
                case REJECTED -> Replay.Outcome.REJECTED;
                case ABORTED -> Replay.Outcome.ABORTED;
                case FAILED -> Replay.Outcome.FAILED;
            };
            int generated = outcome.result() == null ? 0 : outcome.result().outputTokens().length;
            requests.add(new Replay.Sent(h.id(), s.tenant(), s.promptTokens(), generated, kind, s.received(), Instant.now()));
        }
        Map<String, Object> truth = new LinkedHashMap<>();
        truth.put("scenario", scenario.name());
        truth.put("faults", scenario.faults().labels());
        truth.put("started_at", started.toString());
        truth.put("finished_at", Instant.now().toString());
        truth.put("submitted", sent.size());
        truth.put("served", tally.served());
        truth.put("rejected", tally.rejected());
        // no request is aborted here: an application's record has no separate abort count
        truth.put("failed", tally.failed() + tally.aborted());
        truth.put("exposed_requests", tally.exposed());
        truth.put("detected_requests", tally.detected());
        truth.put("cross_tenant_reader_ids", tally.crossTenantReaders());
        truth.put("reader_tenants", List.copyOf(readerTenants));
        truth.put("exposed_tenants", List.copyOf(exposedTenants));
        return new Replay(requests, truth);
    }

    private static List<Sent> submit(ReplayTarget target, List<LabWorkload.Planned> plans) {
        InferenceEngine engine = target.engine();
        List<Sent> out = new ArrayList<>();
        for (LabWorkload.Planned p : plans) {
            String tenant = target.tenantIds().get(p.tenant());
            if (tenant == null) {
                throw new IllegalArgumentException("no tenant id for the lab's tenant '" + p.tenant() + "'");
            }
            Instant now = Instant.now();
            RequestHandle h = engine.submit(p.request(tenant), TokenListener.NONE);
            out.add(new Sent(tenant, h, p.prompt().length, now));
        }
        return out;
    }

    private static void await(List<Sent> sent) {
        for (Sent s : sent) {
            try {
                s.handle().result().get(2, TimeUnit.MINUTES);
            } catch (ExecutionException e) {
                // tallied from the handle afterwards
            } catch (TimeoutException | InterruptedException e) {
                throw new IllegalStateException("lab request " + s.handle().id() + " did not finish: " + s.handle().state());
            }
        }
    }
}
