package dev.pagewarden.core.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.LongConsumer;

/**
 * Buffered little-endian output to a file for model writers: callers reserve room, put bytes into
 * {@link #buffer()}, and the sink flushes in large chunks and reports the running byte count. If the
 * sink is closed before {@link #commit()}, the partial file is deleted.
 */
public final class ChannelSink implements AutoCloseable {
    private static final byte[] ZEROS = new byte[4096];
    private final Path path;
    private final FileChannel ch;
    private final ByteBuffer buf;
    private final LongConsumer progress;
    private long written;
    private boolean committed;

    /** Opens (and truncates) {@code path}; the buffer holds at least {@code minBufferBytes}. */
    public ChannelSink(Path path, int minBufferBytes, LongConsumer progress) throws IOException {
        this.path = path;
        this.ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        this.buf = ByteBuffer.allocateDirect(Math.max(1 << 20, minBufferBytes)).order(ByteOrder.LITTLE_ENDIAN);
        this.progress = progress;
    }

    /** The little-endian buffer to put into after {@link #room}. */
    public ByteBuffer buffer() {
        return buf;
    }

    /** Makes sure {@code bytes} (at most the buffer size) fit into {@link #buffer()}. */
    public void room(long bytes) throws IOException {
        if (buf.remaining() < bytes) {
            flush();
        }
    }

    public void bytes(byte[] b) throws IOException {
        bytes(b, b.length);
    }

    /** Writes the first {@code length} bytes of {@code b}. */
    public void bytes(byte[] b, int length) throws IOException {
        for (int off = 0; off < length; ) {
            room(1);
            int n = Math.min(buf.remaining(), length - off);
            buf.put(b, off, n);
            off += n;
        }
    }

    public void zeros(long n) throws IOException {
        while (n > 0) {
            int k = (int) Math.min(n, ZEROS.length);
            room(k);
            buf.put(ZEROS, 0, k);
            n -= k;
        }
    }

    /** Writes {@code source}'s rows as fp32. */
    public void f32Rows(int rows, int cols, RowSource source) throws IOException {
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            source.fill(r, row);
            room(4L * cols);
            buf.asFloatBuffer().put(row);
            buf.position(buf.position() + 4 * cols);
        }
    }

    private void flush() throws IOException {
        buf.flip();
        while (buf.hasRemaining()) {
            written += ch.write(buf);
        }
        buf.clear();
        progress.accept(written);
    }

    /** Flushes what is left; the file is complete. */
    public void commit() throws IOException {
        flush();
        committed = true;
    }

    @Override
    public void close() throws IOException {
        ch.close();
        if (!committed) {
            Files.deleteIfExists(path);
        }
    }
}
