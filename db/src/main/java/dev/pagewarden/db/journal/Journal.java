package dev.pagewarden.db.journal;

import dev.pagewarden.core.lineage.LineageEvent;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Local write-ahead journal of lineage events: the durability point between the engine and PostgreSQL.
 * One writer appends batches (fsync per batch); one shipper reads fsynced ranges and acknowledges
 * segments once they are committed in the database, which deletes them. Segments roll at a size.
 *
 * <p>Opening recovers: a torn record at the tail of the last segment (crash mid-append) is cut off and
 * reported in {@link #recovery()}. A damaged record anywhere else is left in place; the segment is sealed
 * and the shipper stops there with a {@link JournalCorruptedException}.
 *
 * <p>The disk cap is a fail-closed threshold: past it {@link #accepting()} is false so admission pauses,
 * but appends still succeed, because events of requests already running must not be lost.
 *
 * <p>A journal owns its folder: opening takes an exclusive lock on {@code journal.lock} there (and writes who
 * holds it into that file), so a second journal on the same folder - another process, or another journal in
 * this JVM - fails at open with {@link JournalLockedException}. {@link #close()} releases it; so does the
 * holder's death.
 *
 * <p>Segments name every tenant's requests, so on a POSIX file system the folder is kept {@code 0700} and every
 * file in it {@code 0600} (tightened at open when an older run left them wider).
 */
public final class Journal implements Closeable {

    /**
     * @param dir          where segment files live (created if missing)
     * @param segmentBytes a segment is sealed and a new one started past this size
     * @param capBytes     {@link #accepting()} turns false once the journal holds this many bytes
     */
    public record Config(Path dir, long segmentBytes, long capBytes) {
        public Config {
            Objects.requireNonNull(dir);
            if (segmentBytes < 4096 || capBytes < segmentBytes) {
                throw new IllegalArgumentException("need segmentBytes >= 4096 and capBytes >= segmentBytes");
            }
        }
    }

    /** What opening found: segments on disk, a torn tail cut off (bytes, where), a corrupt segment sealed. */
    public record Recovery(int segments, long tornBytesCut, String tornDetail, String corruptionDetail) {
    }

    /** A snapshot of one segment for the shipper: it may read [header, durableBytes). */
    public record Segment(long id, Path path, long durableBytes, boolean sealed) {
    }

    private static final String SUFFIX = ".seg";
    static final String LOCK_FILE = "journal.lock";

    private final Config config;
    private final Recovery recovery;
    private final ArrayList<Segment> segments = new ArrayList<>(); // guarded by this; last = active
    private final AtomicLong bytesOnDisk = new AtomicLong();
    private final AtomicLong appendedEvents = new AtomicLong();
    private final AtomicLong appendedBytes = new AtomicLong();
    private final FileChannel lockChannel;
    private final FileLock folderLock;
    private FileChannel active; // writer only
    private long activeSize;
    private ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.BIG_ENDIAN);
    private final CRC32C crc = new CRC32C();

    private Journal(Config config, FileChannel lockChannel, FileLock folderLock) throws IOException {
        this.config = config;
        this.lockChannel = lockChannel;
        this.folderLock = folderLock;
        List<Path> files;
        try (Stream<Path> s = Files.list(config.dir())) {
            files = s.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).sorted().toList();
        }
        long torn = 0;
        String tornDetail = null, corruption = null;
        for (int i = 0; i < files.size(); i++) {
            Path p = files.get(i);
            tighten(p, FILE_MODE);
            long size = Files.size(p);
            if (i == files.size() - 1) {
                SegmentFormat.Scan scan = SegmentFormat.scan(p);
                if (!scan.clean() && scan.tornTail()) {
                    torn = size - scan.end();
                    tornDetail = p.getFileName() + " at byte " + scan.end() + ": " + scan.problem();
                    if (scan.end() < SegmentFormat.HEADER_BYTES) { // crashed while creating it: nothing inside
                        Files.delete(p);
                        continue;
                    }
                    cut(p, scan.end());
                    size = scan.end();
                } else if (!scan.clean()) {
                    corruption = p.getFileName() + " at byte " + scan.end() + ": " + scan.problem();
                }
            }
            segments.add(new Segment(idOf(p), p, size, true));
            bytesOnDisk.addAndGet(size);
        }
        // Always append to a fresh segment: the last one's tail was written by a process that may have crashed.
        long nextId = segments.isEmpty() ? 1 : segments.getLast().id() + 1;
        openSegment(nextId);
        this.recovery = new Recovery(files.size(), torn, tornDetail, corruption);
    }

    /**
     * Opens (creating the folder if missing) and recovers the journal in {@code config.dir()}.
     *
     * @throws JournalLockedException another journal, in this process or another, has the folder open
     */
    public static Journal open(Config config) throws IOException {
        privateFolder(config.dir());
        Path lockPath = config.dir().resolve(LOCK_FILE);
        FileChannel ch = FileChannel.open(lockPath, ownerOnly(StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE), ownerOnlyFile(lockPath));
        tighten(lockPath, FILE_MODE);
        try {
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException inThisJvm) {
                lock = null; // a file lock belongs to the whole JVM: another Journal here holds it
            }
            if (lock == null) {
                throw new JournalLockedException(config.dir(), holderOf(ch));
            }
            try {
                ch.truncate(0);
                ch.write(StandardCharsets.UTF_8.encode("pid " + ProcessHandle.current().pid() + " on host "
                        + hostName() + " since " + Instant.now() + "\n"), 0);
                ch.force(false);
                return new Journal(config, ch, lock);
            } catch (IOException | RuntimeException e) {
                lock.release();
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static String holderOf(FileChannel ch) {
        try {
            ByteBuffer b = ByteBuffer.allocate(512);
            ch.read(b, 0);
            String s = new String(b.array(), 0, b.position(), StandardCharsets.UTF_8).strip();
            return s.isEmpty() ? "a process that has not written its id yet" : s;
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    public Recovery recovery() {
        return recovery;
    }

    public Config config() {
        return config;
    }

    /** False once the journal holds {@code capBytes}: the caller must stop admitting work (fail closed). */
    public boolean accepting() {
        return bytesOnDisk.get() < config.capBytes();
    }

    public long bytesOnDisk() {
        return bytesOnDisk.get();
    }

    /** Average bytes per record appended by this process (records vary with tenant/worker names); 0 before any. */
    public double averageRecordBytes() {
        long e = appendedEvents.get();
        return e == 0 ? 0 : (double) appendedBytes.get() / e;
    }

    /**
     * Appends a batch and fsyncs it; when this returns, the events survive a crash. Writer thread only.
     * On an I/O error the segment is cut back to its last durable size, so a retry leaves no half record.
     */
    public void append(List<LineageEvent> batch) throws IOException {
        if (batch.isEmpty()) {
            return;
        }
        encode(batch);
        int n = buffer.remaining();
        if (activeSize > SegmentFormat.HEADER_BYTES && activeSize + n > config.segmentBytes()) {
            roll();
        }
        long start = activeSize;
        try {
            while (buffer.hasRemaining()) {
                active.write(buffer, activeSize + (n - buffer.remaining()));
            }
            active.force(false);
        } catch (IOException e) {
            try {
                active.truncate(start);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        activeSize = start + n;
        bytesOnDisk.addAndGet(n);
        appendedBytes.addAndGet(n);
        appendedEvents.addAndGet(batch.size());
        synchronized (this) {
            Segment last = segments.getLast();
            segments.set(segments.size() - 1, new Segment(last.id(), last.path(), activeSize, false));
        }
    }

    /** Segments oldest first, the active one last. */
    public synchronized List<Segment> segments() {
        return List.copyOf(segments);
    }

    /** The database holds every event of this sealed segment: delete it. Shipper thread only. */
    public void acknowledge(Segment segment) throws IOException {
        synchronized (this) {
            int i = indexOf(segment.id());
            if (i < 0 || !segments.get(i).sealed()) {
                throw new IllegalStateException("segment " + segment.id() + " is not a sealed segment of this journal");
            }
            segments.remove(i);
        }
        long size = Files.size(segment.path());
        Files.delete(segment.path());
        bytesOnDisk.addAndGet(-size);
        syncDir();
    }

    @Override
    public void close() throws IOException {
        try {
            if (active != null) {
                active.force(true);
                active.close();
                active = null;
            }
        } finally {
            if (lockChannel.isOpen()) {
                folderLock.release();
                lockChannel.close();
            }
        }
    }

    private void encode(List<LineageEvent> batch) {
        buffer.clear();
        for (LineageEvent e : batch) {
            if (buffer.remaining() < SegmentFormat.RECORD_OVERHEAD + EventCodec.MAX_ENCODED) {
                ByteBuffer bigger = ByteBuffer.allocateDirect(buffer.capacity() * 2).order(ByteOrder.BIG_ENDIAN);
                buffer.flip();
                bigger.put(buffer);
                buffer = bigger;
            }
            int at = buffer.position();
            buffer.position(at + SegmentFormat.RECORD_OVERHEAD);
            EventCodec.encode(e, buffer);
            int len = buffer.position() - at - SegmentFormat.RECORD_OVERHEAD;
            crc.reset();
            crc.update(buffer.slice(at + SegmentFormat.RECORD_OVERHEAD, len));
            buffer.putInt(at, len);
            buffer.putInt(at + 4, (int) crc.getValue());
        }
        buffer.flip();
    }

    private void roll() throws IOException {
        active.force(true);
        active.close();
        long next;
        synchronized (this) {
            Segment last = segments.getLast();
            segments.set(segments.size() - 1, new Segment(last.id(), last.path(), activeSize, true));
            next = last.id() + 1;
        }
        openSegment(next);
    }

    private void openSegment(long id) throws IOException {
        Path p = config.dir().resolve(String.format("%016d%s", id, SUFFIX));
        active = FileChannel.open(p, ownerOnly(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), ownerOnlyFile(p));
        ByteBuffer h = SegmentFormat.header();
        while (h.hasRemaining()) {
            active.write(h);
        }
        active.force(true);
        syncDir();
        activeSize = SegmentFormat.HEADER_BYTES;
        bytesOnDisk.addAndGet(activeSize);
        synchronized (this) {
            segments.add(new Segment(id, p, activeSize, false));
        }
    }

    private int indexOf(long id) {
        for (int i = 0; i < segments.size(); i++) {
            if (segments.get(i).id() == id) {
                return i;
            }
        }
        return -1;
    }

    private static void cut(Path p, long size) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.truncate(size);
            ch.force(true);
        }
    }

    /** Makes a created or deleted segment file itself durable (the directory entry), not only its bytes. */
    private void syncDir() throws IOException {
        try (FileChannel d = FileChannel.open(config.dir(), StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // Some file systems refuse fsync on a directory; the data itself was fsynced.
        }
    }

    private static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> FOLDER_MODE = PosixFilePermissions.fromString("rwx------");

    /** Creates the folder (and missing parents) {@code 0700}; an existing journal folder is narrowed to it. */
    private static void privateFolder(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            if (posix(parent)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(FOLDER_MODE));
            } else {
                Files.createDirectories(dir);
            }
        }
        tighten(dir, FOLDER_MODE);
    }

    private static Set<StandardOpenOption> ownerOnly(StandardOpenOption... options) {
        return Set.of(options);
    }

    /** The create-time mode for a new file; the umask can only narrow it further. */
    private static FileAttribute<?>[] ownerOnlyFile(Path p) {
        return posix(p.toAbsolutePath().getParent())
                ? new FileAttribute<?>[]{PosixFilePermissions.asFileAttribute(FILE_MODE)}
                : new FileAttribute<?>[0];
    }

    private static void tighten(Path p, Set<PosixFilePermission> mode) throws IOException {
        if (posix(p) && !Files.getPosixFilePermissions(p).equals(mode)) {
            Files.setPosixFilePermissions(p, mode);
        }
    }

    private static boolean posix(Path p) {
        return p != null && p.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    private static long idOf(Path p) {
        String n = p.getFileName().toString();
        return Long.parseLong(n.substring(0, n.length() - SUFFIX.length()));
    }
}
