package dev.pagewarden.lab;

import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvStorage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ground truth of who read whose KV, taken at the storage boundary. After every step it looks, for
 * each sequence that ran, at every slot the step attended to ({@code [0, endPos)} of its page table)
 * and asks the storage's writer shadow which request last wrote those bytes - the shadow is written
 * where the bytes are written (the backend's KV append, a transfer landing, a scrub). A slot last
 * written by a request of another tenant is a cross-tenant read.
 *
 * <p>It shares nothing with the pool's bookkeeping - owner tags, epochs, written-slot counts - nor
 * with the detectors that use it: a wrong write record, a check that is off, a backend that writes
 * to the wrong page fool the detectors, not this.
 */
public final class IsolationOracle {
    private final Map<Long, String> tenantOf = new ConcurrentHashMap<>();
    /** Per request: the most foreign slots in the context of one of its steps. */
    private final Map<Long, Integer> foreignSlots = new ConcurrentHashMap<>();
    /** Per request: steps that produced a token from a context holding foreign slots. */
    private final Map<Long, Integer> tokensFromForeign = new ConcurrentHashMap<>();
    private final List<Long> readers = new ArrayList<>();
    /** Per reader: the requests of other tenants whose bytes it attended to. */
    private final Map<Long, Set<Long>> foreignWriters = new ConcurrentHashMap<>();

    /** Called after each step with the sequences that ran and the storage they ran over. */
    void observe(List<SequenceStep> ran, KvStorage storage) {
        for (SequenceStep s : ran) {
            tenantOf.put(s.requestId(), s.tenant());
        }
        int pageTokens = storage.layout().pageTokens();
        for (SequenceStep s : ran) {
            int foreign = 0;
            for (int i = 0; i * pageTokens < s.endPos(); i++) {
                long[] writers = storage.writers(s.pageTable().get(i).page());
                int slots = Math.min(pageTokens, s.endPos() - i * pageTokens);
                for (int slot = 0; slot < slots; slot++) {
                    if (foreign(writers[slot], s)) {
                        foreign++;
                        foreignWriters.computeIfAbsent(s.requestId(), r -> ConcurrentHashMap.newKeySet()).add(writers[slot]);
                    }
                }
            }
            if (foreign > 0) {
                record(s, foreign);
            }
        }
    }

    /** Written by a request of another tenant (one the oracle never saw run counts as another's). */
    private boolean foreign(long writer, SequenceStep reader) {
        if (writer == 0 || writer == reader.requestId()) {
            return false;
        }
        String tenant = tenantOf.get(writer);
        return tenant == null || !tenant.equals(reader.tenant());
    }

    private void record(SequenceStep s, int foreign) {
        long id = s.requestId();
        synchronized (readers) {
            if (!foreignSlots.containsKey(id)) {
                readers.add(id);
            }
            foreignSlots.merge(id, foreign, Math::max);
        }
        if (s.wantLogits()) {
            tokensFromForeign.merge(id, 1, Integer::sum);
        }
    }

    /** The most slots of another tenant's data in one step's context of a request (0: none ever). */
    public int crossTenantSlots(long requestId) {
        return foreignSlots.getOrDefault(requestId, 0);
    }

    /** Tokens a request sampled from a context holding another tenant's data. */
    public int tokensFromForeignData(long requestId) {
        return tokensFromForeign.getOrDefault(requestId, 0);
    }

    /** The requests of other tenants whose data {@code reader} attended to (empty: none). */
    public Set<Long> foreignWriters(long reader) {
        return Set.copyOf(foreignWriters.getOrDefault(reader, Set.of()));
    }

    /** The tenant of a request the oracle saw run, or null. */
    public String tenantOf(long request) {
        return tenantOf.get(request);
    }

    /** Requests that read another tenant's data, in the order the oracle first saw it. */
    public List<Long> crossTenantReaders() {
        synchronized (readers) {
            return List.copyOf(readers);
        }
    }
}
