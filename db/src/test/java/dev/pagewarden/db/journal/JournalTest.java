package dev.pagewarden.db.journal;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.testing.Ev;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JournalTest {
    @TempDir
    Path dir;

    private static List<LineageEvent> workload(int n) {
        Ev ev = new Ev(7, 1_790_000_000_000_000L);
        List<LineageEvent> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(switch (i % 5) {
                case 0 -> ev.allocate("decode-0", i, i, 100 + i, "tenant-" + (i % 3));
                case 1 -> ev.write("prefill-0", i, i, 100 + i, "tenant-" + (i % 3), 0, 16);
                case 2 -> ev.transferIn("decode-0", i, i, 100 + i, "tenant-ü", 0, 16, "prefill-0", i + 1, i + 2, 3, 0xCAFEBABE);
                case 3 -> ev.verify("decode-0", i, i, 100 + i, null, false);
                default -> ev.read("decode-0", i, i, 100 + i, "t", 0, 16);
            });
        }
        return out;
    }

    private static List<LineageEvent> readAll(Journal j) throws IOException {
        List<LineageEvent> out = new ArrayList<>();
        for (Journal.Segment s : j.segments()) {
            SegmentFormat.read(s.path(), 0, s.durableBytes(), Integer.MAX_VALUE, out);
        }
        return out;
    }

    private Journal open(long segmentBytes, long cap) throws IOException {
        return Journal.open(new Journal.Config(dir, segmentBytes, cap));
    }

    @Test
    void folderAndFilesAreReadableByTheOwnerOnly() throws IOException {
        Path journalDir = dir.resolve("lineage");
        try (Journal j = Journal.open(new Journal.Config(journalDir, 4096, 1 << 30))) {
            List<LineageEvent> events = workload(400);
            for (int i = 0; i < events.size(); i += 40) {
                j.append(events.subList(i, i + 40)); // rolls into several segments
            }
            assertThat(j.segments().size()).isGreaterThan(1);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(journalDir))).isEqualTo("rwx------");
        try (var files = Files.list(journalDir)) {
            assertThat(files.toList()).isNotEmpty().allSatisfy(f ->
                    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).as(f.toString())
                            .isEqualTo("rw-------"));
        }
    }

    @Test
    void aFolderLeftWideByAnOlderRunIsNarrowedAtOpen() throws IOException {
        Path journalDir = dir.resolve("old");
        try (Journal j = Journal.open(new Journal.Config(journalDir, 4096, 1 << 30))) {
            j.append(workload(20));
        }
        Files.setPosixFilePermissions(journalDir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path segment;
        try (var files = Files.list(journalDir)) {
            segment = files.filter(f -> f.toString().endsWith(".seg")).findFirst().orElseThrow();
        }
        Files.setPosixFilePermissions(segment, PosixFilePermissions.fromString("rw-r--r--"));
        Journal.open(new Journal.Config(journalDir, 4096, 1 << 30)).close();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(journalDir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(segment))).isEqualTo("rw-------");
    }

    @Test
    void roundTripAcrossSegmentRollsAndReopen() throws IOException {
        List<LineageEvent> events = workload(5_000);
        try (Journal j = open(16 * 1024, 1 << 30)) {
            for (int i = 0; i < events.size(); i += 100) {
                j.append(events.subList(i, i + 100));
            }
            assertThat(j.segments().size()).isGreaterThan(5);
            assertThat(readAll(j)).isEqualTo(events);
        }
        try (Journal j = open(16 * 1024, 1 << 30)) {
            assertThat(j.recovery().tornBytesCut()).isZero();
            assertThat(j.recovery().corruptionDetail()).isNull();
            assertThat(readAll(j)).isEqualTo(events);
        }
    }

    @Test
    void tornRecordAtTheTailIsCutAndReported() throws IOException {
        List<LineageEvent> events = workload(50);
        Path last;
        try (Journal j = open(1 << 20, 1 << 30)) {
            j.append(events);
            last = j.segments().getLast().path();
        }
        // A crash mid-append: the header of a 90-byte record and only 20 bytes of it reached the disk.
        try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.allocate(28).putInt(90).putInt(0x1234).put(new byte[20]).flip());
        }
        try (Journal j = open(1 << 20, 1 << 30)) {
            assertThat(j.recovery().tornBytesCut()).isEqualTo(28);
            assertThat(j.recovery().tornDetail()).contains("runs past end of file");
            assertThat(readAll(j)).isEqualTo(events);
            j.append(workload(3)); // appending after recovery works and is readable
            assertThat(readAll(j)).hasSize(53);
        }
    }

    @Test
    void finalRecordWithBadChecksumIsATornTail() throws IOException {
        List<LineageEvent> events = workload(10);
        Path last;
        try (Journal j = open(1 << 20, 1 << 30)) {
            j.append(events);
            last = j.segments().getLast().path();
        }
        long size = Files.size(last);
        flipByte(last, size - 3); // inside the payload of the last record
        try (Journal j = open(1 << 20, 1 << 30)) {
            assertThat(j.recovery().tornBytesCut()).isPositive();
            assertThat(j.recovery().tornDetail()).contains("CRC32C");
            assertThat(readAll(j)).isEqualTo(events.subList(0, 9));
        }
    }

    @Test
    void corruptionInTheMiddleIsRefusedWithAClearError() throws IOException {
        Path first;
        try (Journal j = open(4096, 1 << 30)) {
            List<LineageEvent> events = workload(400);
            for (int i = 0; i < events.size(); i += 20) {
                j.append(events.subList(i, i + 20));
            }
            first = j.segments().getFirst().path();
        }
        flipByte(first, SegmentFormat.HEADER_BYTES + 8 + 5); // payload of the first record of a sealed segment
        try (Journal j = open(4096, 1 << 30)) {
            assertThat(j.recovery().tornBytesCut()).isZero(); // not the tail: nothing is cut
            Journal.Segment s = j.segments().getFirst();
            assertThatThrownBy(() -> SegmentFormat.read(s.path(), 0, s.durableBytes(), 1000, new ArrayList<>()))
                    .isInstanceOf(JournalCorruptedException.class)
                    .hasMessageContaining(s.path().getFileName().toString())
                    .hasMessageContaining("at byte 8")
                    .hasMessageContaining("CRC32C mismatch")
                    .hasMessageContaining("shipping stopped");
        }
    }

    @Test
    void corruptionInTheLastSegmentBeforeValidRecordsIsNotCutAsATail() throws IOException {
        Path last;
        try (Journal j = open(1 << 20, 1 << 30)) {
            j.append(workload(30));
            last = j.segments().getLast().path();
        }
        flipByte(last, SegmentFormat.HEADER_BYTES + 8 + 5);
        long size = Files.size(last);
        try (Journal j = open(1 << 20, 1 << 30)) {
            assertThat(j.recovery().tornBytesCut()).isZero();
            assertThat(j.recovery().corruptionDetail()).contains("CRC32C mismatch");
            assertThat(Files.size(last)).isEqualTo(size); // evidence kept
            assertThat(j.segments()).hasSize(2); // sealed; appends go to a new segment
        }
    }

    @Test
    void diskCapStopsAcceptingUntilSegmentsAreAcknowledged() throws IOException {
        try (Journal j = open(4096, 16 * 1024)) {
            List<LineageEvent> events = workload(1_000);
            int i = 0;
            while (j.accepting()) {
                j.append(events.subList(i, i + 10));
                i += 10;
            }
            assertThat(j.bytesOnDisk()).isGreaterThanOrEqualTo(16 * 1024);
            j.append(events.subList(i, i + 10)); // in-flight requests still get their events journaled
            for (Journal.Segment s : j.segments()) {
                if (s.sealed()) {
                    j.acknowledge(s);
                }
            }
            assertThat(j.accepting()).isTrue();
            assertThat(j.segments()).hasSize(1);
        }
    }

    @Test
    void eventsNameTheirNodeAndASegmentOfTheFormatBeforeNodesIsStillRead() throws IOException {
        // what the previous release left: segment 1 in format 1 (no node), hand-written to its documented layout
        Ev old = new Ev(3, 1_790_000_000_000_000L);
        List<LineageEvent> before = List.of(old.allocate("decode-0", 4, 1, 100, "tenant-a"),
                old.write("decode-0", 4, 1, 100, "tenant-a", 0, 16),
                old.transferIn("decode-0", 5, 1, 100, "tenant-a", 0, 16, "prefill-0", 2, 1, 1, 0xCAFEBABE),
                old.verify("decode-0", 5, 1, 100, null, false));
        ByteBuffer v1 = ByteBuffer.allocate(4096).putInt(0x50574A4C).putInt(1);
        for (LineageEvent e : before) {
            ByteBuffer rec = formatOne(e);
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(rec.duplicate());
            v1.putInt(rec.remaining()).putInt((int) crc.getValue()).put(rec);
        }
        Files.write(dir.resolve(String.format("%016d.seg", 1)), java.util.Arrays.copyOf(v1.array(), v1.position()));

        Ev a = new Ev("replica-a", 4, 1_790_000_001_000_000L);
        List<LineageEvent> after = List.of(a.allocate("decode-0", 4, 1L << 60, 200, "tenant-b"),
                a.transferIn("decode-0", 4, 1L << 60, 200, "tenant-b", 0, 16, "prefill-0", 2, 7, 1, 5));
        try (Journal j = open(1 << 20, 1 << 30)) {
            assertThat(j.recovery().corruptionDetail()).isNull();
            j.append(after);
            List<LineageEvent> read = readAll(j);
            assertThat(read).hasSize(before.size() + after.size());
            for (int i = 0; i < before.size(); i++) {
                LineageEvent e = before.get(i);
                assertThat(read.get(i)).isEqualTo(new LineageEvent(e.id(), e.kind(), e.timeMicros(), "unknown", e.worker(),
                        e.page(), e.epoch(), e.requestId(), e.tenant(), e.slotFrom(), e.slotTo(), e.peerWorker(),
                        e.peerPage(), e.peerEpoch(), e.generation(), e.checksum(), e.ok()));
            }
            assertThat(read.subList(before.size(), read.size())).isEqualTo(after);
            assertThat(read.getLast().node()).isEqualTo("replica-a");
            // the new segment says format 2 in its header
            ByteBuffer head = ByteBuffer.allocate(8);
            try (FileChannel ch = FileChannel.open(j.segments().getLast().path(), StandardOpenOption.READ)) {
                ch.read(head, 0);
            }
            assertThat(head.getInt(4)).isEqualTo(2);
        }
    }

    @Test
    void aSegmentOfAnUnknownFormatIsRefused() throws IOException {
        Path p = dir.resolve(String.format("%016d.seg", 1));
        Files.write(p, ByteBuffer.allocate(8).putInt(0x50574A4C).putInt(3).array());
        assertThatThrownBy(() -> SegmentFormat.read(p, 0, 8, 10, new ArrayList<>()))
                .isInstanceOf(JournalCorruptedException.class).hasMessageContaining("version 3");
    }

    /** Journal format 1 of an event, written from its layout (no node): kind | flags | id | time | worker | page | epoch | request | optional parts. */
    private static ByteBuffer formatOne(LineageEvent e) {
        ByteBuffer b = ByteBuffer.allocate(512);
        boolean slots = e.slotFrom() != -1 || e.slotTo() != -1;
        boolean transfer = e.peerPage() != -1 || e.peerEpoch() != -1 || e.generation() != 0 || e.checksum() != 0;
        int flags = (e.tenant() != null ? 1 : 0) | (slots ? 2 : 0) | (e.peerWorker() != null ? 4 : 0)
                | (transfer ? 8 : 0) | (e.ok() ? 16 : 0);
        b.put((byte) KindCodes.code(e.kind())).put((byte) flags).putLong(e.id()).putLong(e.timeMicros());
        str(b, e.worker());
        b.putInt(e.page()).putLong(e.epoch()).putLong(e.requestId());
        if (e.tenant() != null) {
            str(b, e.tenant());
        }
        if (slots) {
            b.putInt(e.slotFrom()).putInt(e.slotTo());
        }
        if (e.peerWorker() != null) {
            str(b, e.peerWorker());
        }
        if (transfer) {
            b.putInt(e.peerPage()).putLong(e.peerEpoch()).putInt(e.generation()).putInt(e.checksum());
        }
        return b.flip();
    }

    private static void str(ByteBuffer b, String s) {
        byte[] bytes = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        b.putShort((short) bytes.length).put(bytes);
    }

    private static void flipByte(Path p, long at) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            b.rewind();
            ch.write(b, at);
        }
    }
}
