package dev.pagewarden.platform.audit;

import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.incident.audit.EvidenceChain;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Array;
import java.sql.Timestamp;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Takes every safety event off the engine thread that detected it (never blocking it) and writes
 * it to {@code safety_events} from its own thread, retrying while the database is away. Keeps the
 * most recent events in memory for the operator's overview and tells subscribers (incidents).
 */
@Component
public class SafetyEventRecorder implements SafetyListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SafetyEventRecorder.class);
    private static final int RECENT = 200;

    private final JdbcClient jdbc;
    private final EvidenceChain chain;
    private final String node;
    private final BlockingQueue<SafetyEvent> pending = new LinkedBlockingQueue<>();
    private final Deque<SafetyEvent> recent = new ArrayDeque<>();
    private final List<Consumer<SafetyEvent>> subscribers = new CopyOnWriteArrayList<>();
    private final Thread writer;
    private volatile boolean closed;

    /** {@code properties}: the node id ({@code pagewarden.engine.node-id}) each row names beside the worker. */
    public SafetyEventRecorder(JdbcClient jdbc, PagewardenProperties properties, EvidenceChain chain) {
        this.jdbc = jdbc;
        this.chain = chain;
        this.node = properties.engine().node();
        this.writer = Thread.ofPlatform().name("pagewarden-safety-writer").daemon().start(this::writeLoop);
    }

    @Override
    public void onEvent(SafetyEvent event) {
        LOG.warn("safety event {} ({}) on {} request={} tenant={}: {}", event.type(), event.severity(), event.worker(),
                event.requestId(), event.tenant(), event.details());
        synchronized (recent) {
            recent.addFirst(event);
            if (recent.size() > RECENT) {
                recent.removeLast();
            }
        }
        pending.add(event);
        for (Consumer<SafetyEvent> s : subscribers) {
            try {
                s.accept(event);
            } catch (RuntimeException e) {
                LOG.error("safety event subscriber failed", e);
            }
        }
    }

    /** The node this platform's engine runs on: what {@code safety_events.node} says for its events. */
    public String node() {
        return node;
    }

    public void subscribe(Consumer<SafetyEvent> subscriber) {
        subscribers.add(subscriber);
    }

    /** The latest events, newest first. */
    public List<SafetyEvent> recent() {
        synchronized (recent) {
            return new ArrayList<>(recent);
        }
    }

    private void writeLoop() {
        SafetyEvent next = null;
        long backoffMs = 100;
        while (!closed || next != null || !pending.isEmpty()) {
            try {
                if (next == null) {
                    next = pending.poll(200, TimeUnit.MILLISECONDS);
                    if (next == null) {
                        continue;
                    }
                }
                insert(next);
                next = null;
                backoffMs = 100;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                LOG.warn("could not record safety event yet ({}); retrying in {} ms", e.getMessage(), backoffMs);
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
                backoffMs = Math.min(backoffMs * 2, 5_000);
            }
        }
    }

    /** The row and its chain link in one transaction. */
    private void insert(SafetyEvent e) {
        chain.write(() -> {
            chain.link("safety_events", insertRow(e));
            return null;
        });
    }

    private long insertRow(SafetyEvent e) {
        return jdbc.sql("""
                INSERT INTO safety_events (event_time, type, severity, node, worker, request_id, tenant_id, pages, epochs, details)
                VALUES (:time, :type, :severity, :node, :worker, :request, :tenant, :pages, :epochs, :details) RETURNING id""")
                .param("time", Timestamp.from(e.time()))
                .param("type", e.type().name())
                .param("severity", e.severity().name())
                .param("node", node)
                .param("worker", e.worker())
                .param("request", e.requestId())
                .param("tenant", e.tenant())
                .param("pages", new SqlArray("integer", e.pages().toArray()))
                .param("epochs", new SqlArray("bigint", e.epochs().toArray()))
                .param("details", e.details())
                .query(Long.class).single();
    }

    /** Waits until every event taken so far is written (or the timeout passes); true when none is left. */
    public boolean flush(long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!pending.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return pending.isEmpty();
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        writer.join(5_000);
    }

    /** A PostgreSQL array parameter built on the connection that runs the statement. */
    private record SqlArray(String type, Object[] values) implements org.springframework.jdbc.core.SqlTypeValue {
        @Override
        public void setTypeValue(java.sql.PreparedStatement ps, int index, int sqlType, String typeName)
                throws java.sql.SQLException {
            Array array = ps.getConnection().createArrayOf(type, values);
            ps.setArray(index, array);
        }
    }
}
