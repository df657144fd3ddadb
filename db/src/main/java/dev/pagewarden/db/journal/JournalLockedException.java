package dev.pagewarden.db.journal;

import java.io.IOException;
import java.nio.file.Path;

/** The journal folder is already open by another journal: every replica needs a folder of its own. */
public final class JournalLockedException extends IOException {
    private final Path dir;
    private final String holder;

    JournalLockedException(Path dir, String holder) {
        super("lineage journal folder " + dir.toAbsolutePath() + " is in use by another journal (held by " + holder
                + ", lock file " + Journal.LOCK_FILE + "); every process needs a journal folder of its own");
        this.dir = dir;
        this.holder = holder;
    }

    public Path dir() {
        return dir;
    }

    /** Who holds the folder, as its lock file says: {@code pid N on host H since T}. */
    public String holder() {
        return holder;
    }
}
