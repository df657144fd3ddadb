package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The native quantized kernels ({@code src/main/c/pw_kquant.c}, built into the jar as
 * {@code native/linux-x86_64/libpagewarden_kquant.so} when the build machine has a C compiler), called
 * through the FFM API. They serve row-major Q8_0, Q4_0, Q4_K, Q5_K and Q6_K matrices: the activations are
 * rounded to 8 bits per block (32 values for Q8_0/Q4_0, the 256 of a K-quant super-block), and each
 * output is an integer dot product per block (AVX-512 VNNI, AVX-VNNI, AVX2 or plain C, the best this CPU
 * has, all with the same bits), scaled in float in an order fixed by the row length: batch invariance
 * holds as with the Java kernels.
 *
 * <p>Off with {@code -Dpagewarden.kernels=vector} (or {@code scalar}, or the environment variable
 * {@code PAGEWARDEN_KERNELS}); {@code -Dpagewarden.native.isa=avx2} (or {@code avxvnni},
 * {@code avx512vnni}, {@code scalar}) picks a narrower instruction set than the best one.
 */
final class NativeKernels {

    /** Instruction sets, in the order of the library's bit mask. */
    enum Isa { SCALAR, AVX2, AVXVNNI, AVX512VNNI }

    /** Activation formats of the library: 8-bit blocks of 32 values, or of 256 with sums of each 16. */
    static final int A32 = 0;
    static final int A256 = 1;

    static final String LIBRARY = "native/linux-x86_64/libpagewarden_kquant.so";

    private static final NativeKernels INSTANCE;
    /** Why the native kernels serve, or why they do not. */
    private static final String REASON;

    static {
        NativeKernels k = null;
        String reason;
        try {
            String off = setting("pagewarden.kernels", "PAGEWARDEN_KERNELS");
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            String arch = System.getProperty("os.arch", "");
            if (off != null && !off.equals("native")) {
                reason = "native kernels off (pagewarden.kernels=" + off + ")";
            } else if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
                reason = "no native kernels for " + os + "/" + arch;
            } else {
                Path lib = extract();
                if (lib == null) {
                    reason = "native kernels not in this build (no C compiler when it was built)";
                } else {
                    k = new NativeKernels(SymbolLookup.libraryLookup(lib, Arena.global()));
                    reason = "native " + k.isa.name().toLowerCase(Locale.ROOT) + " ("
                            + (k.isa == k.best ? "the best instruction set of this CPU" : "chosen by pagewarden.native.isa")
                            + ") for Q8_0, Q4_0, Q4_K, Q5_K and Q6_K weights";
                }
            }
        } catch (IOException | RuntimeException | LinkageError e) {
            k = null;
            reason = "native kernels failed to load: " + e;
        }
        INSTANCE = k;
        REASON = reason;
    }

    private static String setting(String property, String env) {
        String v = System.getProperty(property);
        return v != null ? v.trim().toLowerCase(Locale.ROOT) : System.getenv(env) == null ? null
                : System.getenv(env).trim().toLowerCase(Locale.ROOT);
    }

    /** The library from the class path as a file (a temporary copy when it lies in a jar), or null. */
    private static Path extract() throws IOException {
        var url = NativeKernels.class.getClassLoader().getResource(LIBRARY);
        if (url == null) {
            return null;
        }
        if (url.getProtocol().equals("file")) {
            try {
                return Path.of(url.toURI());
            } catch (java.net.URISyntaxException e) {
                throw new IOException(e);
            }
        }
        Path tmp = Files.createTempFile("libpagewarden_kquant", ".so");
        tmp.toFile().deleteOnExit();
        try (InputStream in = url.openStream()) {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
        }
        return tmp;
    }

    /** The kernels in use, or null when the Java kernels serve every type. */
    static NativeKernels instance() {
        return INSTANCE;
    }

    /** One line: which kernels serve the quantized types, and why. */
    static String reason() {
        return REASON;
    }

    private final MethodHandle isas;
    private final MethodHandle quantize;
    private final MethodHandle matmul;
    private final int mask;
    private final Isa best;
    private final Isa isa;

    private NativeKernels(SymbolLookup lib) {
        Linker linker = Linker.nativeLinker();
        isas = linker.downcallHandle(lib.findOrThrow("pw_isas"), FunctionDescriptor.of(JAVA_INT));
        MethodHandle rowBytes = linker.downcallHandle(lib.findOrThrow("pw_act_row_bytes"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_INT));
        // critical: short calls without a safepoint, which may read and write Java arrays in place.
        // The weights and the quantized activations go as plain addresses (JAVA_LONG, a pointer's
        // register in the C calling convention): a segment argument of a shared arena is acquired and
        // released on every call, atomic updates of one counter that the engine's threads would all
        // contend for. Both outlive every call: the weights the model, the activations their Acts.
        quantize = linker.downcallHandle(lib.findOrThrow("pw_quantize"),
                FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG),
                Linker.Option.critical(true));
        matmul = linker.downcallHandle(lib.findOrThrow("pw_matmul"),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
                        JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG),
                Linker.Option.critical(true));
        try {
            mask = (int) isas.invokeExact();
            if ((long) rowBytes.invokeExact(A32, 64) != actRowBytes(A32, 64)
                    || (long) rowBytes.invokeExact(A256, 512) != actRowBytes(A256, 512)) {
                throw new IllegalStateException("the library's activation layout is not this class's");
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        Isa top = Isa.SCALAR;
        for (Isa i : Isa.values()) {
            if (supports(i)) {
                top = i;
            }
        }
        best = top;
        String forced = setting("pagewarden.native.isa", "PAGEWARDEN_NATIVE_ISA");
        Isa chosen = forced == null ? best : Isa.valueOf(forced.toUpperCase(Locale.ROOT));
        if (!supports(chosen)) {
            throw new IllegalStateException("pagewarden.native.isa=" + forced + ": this CPU lacks it");
        }
        isa = chosen;
    }

    /** Whether this CPU runs the library's {@code i} path. */
    boolean supports(Isa i) {
        return (mask >> i.ordinal() & 1) != 0;
    }

    /** The instruction set in use. */
    Isa isa() {
        return isa;
    }

    /** Whether row-major matrices of {@code type} are computed here. */
    static boolean serves(DType type) {
        return code(type) >= 0;
    }

    private static int code(DType type) {
        return switch (type) {
            case Q8_0 -> 0;
            case Q4_0 -> 1;
            case Q4_K -> 2;
            case Q5_K -> 3;
            case Q6_K -> 4;
            default -> -1;
        };
    }

    /** The activation format {@code type}'s kernels read. */
    static int format(DType type) {
        return type == DType.Q8_0 || type == DType.Q4_0 ? A32 : A256;
    }

    /** Bytes of one row of {@code n} activations in {@code format}. */
    static long actRowBytes(int format, int n) {
        // pw_act_row_bytes: per block of 32 an 8-byte head (float scale, int32 sum) and 32 quants, per
        // block of 256 296 bytes
        return format == A32 ? n / 32 * 40L : n / 256 * 296L;
    }

    /** Rounds rows {@code [r0, r1)} of {@code x} (rows of {@code n}) to 8 bits in {@code format} into {@code dst}. */
    void quantize(int format, float[] x, int n, int r0, int r1, MemorySegment dst) {
        if (n % (format == A32 ? 32 : 256) != 0 || dst.byteSize() < r1 * actRowBytes(format, n)
                || x.length < (long) r1 * n || !dst.isNative()) {
            throw new IllegalArgumentException("quantize: " + r1 + " rows of " + n + " into " + dst.byteSize() + " bytes");
        }
        try {
            quantize.invokeExact(format, MemorySegment.ofArray(x), (long) n, n, r0, r1, dst.address());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Rows {@code [r0, r1)} of {@code w} times the {@code batch} activation rows of {@code acts}
     * ({@link #quantize}d in {@link #format}{@code (w.type())}): row r times row b goes to
     * {@code out[b * w.rows() + r]}. The caller has checked the shapes ({@link MatMul}).
     */
    void matmul(Isa isa, Tensor w, int r0, int r1, MemorySegment acts, int batch, float[] out) {
        // the addresses go unchecked to C: the bounds are checked here
        MemorySegment data = w.data();
        long actBytes = actRowBytes(format(w.type()), w.cols());
        if (!data.isNative() || !acts.isNative() || r0 < 0 || r1 > w.rows() || data.byteSize() < r1 * w.rowBytes()
                || acts.byteSize() < batch * actBytes || out.length < (long) batch * w.rows()) {
            throw new IllegalArgumentException("native matmul of " + w.type() + " " + w.rows() + "x" + w.cols()
                    + " rows [" + r0 + ", " + r1 + ") batch " + batch + ": weights, activations or output out of bounds"
                    + " or not in native memory");
        }
        int rc;
        try {
            rc = (int) matmul.invokeExact(isa.ordinal(), code(w.type()), data.address(), w.rowBytes(), w.cols(), r0,
                    r1, acts.address(), actBytes, batch, MemorySegment.ofArray(out),
                    (long) w.rows());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            throw new IllegalStateException("native matmul of " + w.type() + " on " + isa + " failed: " + rc);
        }
    }
}
