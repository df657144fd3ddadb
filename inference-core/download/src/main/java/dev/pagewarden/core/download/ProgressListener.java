package dev.pagewarden.core.download;

/** Receives download progress; called on the downloading thread, so implementations must be quick. */
public interface ProgressListener {
    ProgressListener NONE = new ProgressListener() {
        @Override
        public void progress(String file, long done, long total) {
        }
    };

    /**
     * {@code done} bytes of {@code file} are on disk (including any resumed part); {@code total} is -1
     * when the server did not say.
     */
    void progress(String file, long done, long total);

    /** A one-line notice worth showing a person (a resume, a retry, a file already present). */
    default void message(String line) {
    }
}
