package dev.pagewarden.core.download;

import java.io.IOException;

/** A download that cannot succeed as asked; the message names the file or URL and the reason. */
public final class DownloadException extends IOException {
    public DownloadException(String message) {
        super(message);
    }

    public DownloadException(String message, Throwable cause) {
        super(message, cause);
    }
}
