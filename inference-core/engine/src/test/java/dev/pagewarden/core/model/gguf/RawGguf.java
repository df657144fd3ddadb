package dev.pagewarden.core.model.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Hand-assembled GGUF bytes for tests that need a header to lie in one precise field. */
final class RawGguf {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    static RawGguf header(int version, long tensorCount, long kvCount) {
        return new RawGguf().u32(GgufReader.MAGIC).u32(version).u64(tensorCount).u64(kvCount);
    }

    RawGguf u32(long v) {
        return put(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array());
    }

    RawGguf u64(long v) {
        return put(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
    }

    RawGguf str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return u64(b.length).put(b);
    }

    RawGguf kvU32(String key, long v) {
        return str(key).u32(GgufType.UINT32.ordinal()).u32(v);
    }

    /** A tensor entry: name, dims (ne[0] first), ggml type id, data offset. */
    RawGguf tensor(String name, long[] dims, int type, long offset) {
        str(name).u32(dims.length);
        for (long d : dims) {
            u64(d);
        }
        return u32(type).u64(offset);
    }

    /** Zero bytes up to a multiple of 32, then {@code n} zero data bytes. */
    RawGguf alignedData(int n) {
        put(new byte[(32 - out.size() % 32) % 32]);
        return put(new byte[n]);
    }

    RawGguf put(byte[] b) {
        out.write(b, 0, b.length);
        return this;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    Path writeTo(Path file) throws IOException {
        return Files.write(file, bytes());
    }
}
