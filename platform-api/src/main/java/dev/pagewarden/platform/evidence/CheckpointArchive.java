package dev.pagewarden.platform.evidence;

import dev.pagewarden.db.evidence.Checkpoints;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Signed checkpoints kept outside the database: each one this replica makes is appended as a line
 * ({@link Checkpoints#archiveLine}) to a file the operator archives. Someone who rewrites a chain in the database
 * and deletes or replaces its checkpoints there cannot reach this file; verification holds the chains to it.
 */
final class CheckpointArchive {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointArchive.class);

    private final Path file;

    /** {@code file}: the archive, or null for none. */
    CheckpointArchive(Path file) {
        this.file = file;
    }

    /** Appends {@code made}, fsynced; a failure is logged loudly: those checkpoints are then in the database only. */
    synchronized void append(List<Checkpoints.Checkpoint> made) {
        if (file == null || made.isEmpty()) {
            return;
        }
        StringBuilder text = new StringBuilder();
        made.forEach(k -> text.append(Checkpoints.archiveLine(k)).append('\n'));
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                ch.write(StandardCharsets.UTF_8.encode(text.toString()));
                ch.force(true);
            }
        } catch (IOException e) {
            LOG.warn("could not append {} checkpoint(s) to the archive {}: {}", made.size(), file, e.getMessage());
        }
    }

    /** The archived checkpoints; none when no archive is configured or it does not exist yet. */
    List<Checkpoints.Checkpoint> read() throws IOException {
        return file == null || !Files.exists(file) ? List.of() : Checkpoints.readArchive(file);
    }
}
