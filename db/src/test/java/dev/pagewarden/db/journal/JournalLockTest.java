package dev.pagewarden.db.journal;

import dev.pagewarden.db.testing.Ev;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One journal per folder: a second opener, in this JVM or another process, is refused with who holds it. */
class JournalLockTest {
    @TempDir
    Path dir;

    private Journal open() throws IOException {
        return Journal.open(new Journal.Config(dir, 4096, 1 << 20));
    }

    @Test
    void aSecondJournalInThisJvmIsRefusedUntilTheFirstCloses() throws IOException {
        String self = "pid " + ProcessHandle.current().pid() + " on host ";
        try (Journal first = open()) {
            first.append(List.of(new Ev(1, 1_790_000_000_000_000L).allocate("decode-0", 1, 1, 7, "t")));
            assertThatThrownBy(this::open)
                    .isInstanceOf(JournalLockedException.class)
                    .hasMessageContaining("lineage journal folder " + dir.toAbsolutePath() + " is in use")
                    .hasMessageContaining(self)
                    .satisfies(e -> assertThat(((JournalLockedException) e).holder()).startsWith(self));
            // the refused open changed nothing: the first journal still appends
            first.append(List.of(new Ev(1, 1_790_000_000_000_001L).allocate("decode-0", 2, 2, 8, "t")));
        }
        try (Journal again = open()) {
            assertThat(again.recovery().segments()).isEqualTo(1);
        }
    }

    @Test
    void aJournalHeldByAnotherProcessIsRefusedAndFreedWhenItExits() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process holder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                JournalLockHolder.class.getName(), dir.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).as("the other process opened the journal").isEqualTo("opened");
            assertThatThrownBy(this::open)
                    .isInstanceOf(JournalLockedException.class)
                    .hasMessageContaining(dir.toAbsolutePath().toString())
                    .hasMessageContaining("held by pid " + holder.pid() + " on host ");
            holder.getOutputStream().close();
            assertThat(holder.waitFor(30, TimeUnit.SECONDS)).as("holder exited").isTrue();
            assertThat(holder.exitValue()).isZero();
        } finally {
            holder.destroyForcibly();
        }
        try (Journal mine = open()) {
            assertThat(mine.accepting()).isTrue();
        }
    }
}
