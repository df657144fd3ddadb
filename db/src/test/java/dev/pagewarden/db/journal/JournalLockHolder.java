package dev.pagewarden.db.journal;

import java.nio.file.Path;

/** A second process for {@link JournalLockTest}: opens the journal in {@code args[0]}, says so, holds it until stdin closes. */
public final class JournalLockHolder {
    private JournalLockHolder() {
    }

    public static void main(String[] args) throws Exception {
        try (Journal j = Journal.open(new Journal.Config(Path.of(args[0]), 4096, 1 << 20))) {
            System.out.println("opened");
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the journal until the test closes our stdin
            }
        }
    }
}
