package dev.pagewarden.platform.evidence;

import dev.pagewarden.db.evidence.Checkpoints;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Signs this node's chain heads every {@code pagewarden.evidence.checkpoint-interval} and once more when the
 * platform stops, on a thread of its own (never an event loop). A failed round (database away) is logged
 * and retried at the next one: the chains are in the database either way, a checkpoint only pins them. Each
 * checkpoint made is also appended to the {@link CheckpointArchive} outside the database when one is configured.
 */
final class CheckpointWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointWriter.class);

    private final Checkpoints checkpoints;
    private final CheckpointArchive archive;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("pagewarden-checkpoints").daemon().factory());

    CheckpointWriter(Checkpoints checkpoints, CheckpointArchive archive, Duration every) {
        if (every.isNegative() || every.isZero()) {
            throw new IllegalArgumentException("pagewarden.evidence.checkpoint-interval must be positive, not " + every);
        }
        this.checkpoints = checkpoints;
        this.archive = archive;
        timer.scheduleWithFixedDelay(this::round, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One round now; returns the checkpoints it made (none when no chain moved or the database failed). */
    List<Checkpoints.Checkpoint> round() {
        try {
            List<Checkpoints.Checkpoint> made = checkpoints.checkpoint();
            if (!made.isEmpty()) {
                archive.append(made);
                LOG.debug("signed checkpoints {}", made.stream().map(k -> k.chain() + "#" + k.seq()).toList());
            }
            return made;
        } catch (Exception e) {
            LOG.warn("could not sign chain checkpoints now ({}); trying again at the next interval", e.getMessage());
            return List.of();
        }
    }

    @Override
    public void close() throws InterruptedException {
        timer.shutdown();
        timer.awaitTermination(10, TimeUnit.SECONDS);
        round(); // the heads as of shutdown
    }
}
