package dev.pagewarden.platform.evidence;

import dev.pagewarden.db.evidence.Checkpoints;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Checkpoints appended to the archive outside the database read back field for field; a bad line is named. */
class CheckpointArchiveTest {
    @TempDir
    Path tmp;

    @Test
    void appendedCheckpointsReadBackAndABadLineIsNamed() throws Exception {
        Path file = tmp.resolve("archive").resolve("checkpoints.log");
        CheckpointArchive archive = new CheckpointArchive(file);
        assertThat(archive.read()).isEmpty();
        Checkpoints.Checkpoint a = new Checkpoints.Checkpoint("admin_audit:node-a", 3, new byte[32], Instant.parse("2026-03-01T10:05:00.123456Z"),
                "pw-1-0123456789abcdef", new byte[] {1, 2, 3});
        Checkpoints.Checkpoint b = new Checkpoints.Checkpoint("lineage:node-a", 9, new byte[] {(byte) 0xab, 1}, Instant.parse("2026-03-01T10:10:00Z"),
                "pw-2-0123456789abcdef", new byte[] {4});
        archive.append(List.of(a));
        archive.append(List.of(b));

        List<Checkpoints.Checkpoint> back = archive.read();
        assertThat(back).hasSize(2);
        assertThat(back.get(0).chain()).isEqualTo(a.chain());
        assertThat(back.get(0).seq()).isEqualTo(3);
        assertThat(back.get(0).head()).isEqualTo(a.head());
        assertThat(back.get(0).at()).isEqualTo(a.at());
        assertThat(back.get(0).keyId()).isEqualTo(a.keyId());
        assertThat(back.get(0).signature()).isEqualTo(a.signature());
        assertThat(back.get(1).head()).isEqualTo(b.head());

        Files.writeString(file, "checkpoint admin_audit:node-a x\n", java.nio.file.StandardOpenOption.APPEND);
        assertThatThrownBy(archive::read).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line 3");
        assertThat(new CheckpointArchive(null).read()).isEmpty();
    }
}
