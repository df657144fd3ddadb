package dev.pagewarden.core.tensor;

/**
 * Chooses between the Vector API kernels and the plain-Java fallback, once per JVM: the one place that
 * does ({@link MatMul}, {@link Ops} and {@link Bandwidth} all go through {@link #ROWS}).
 *
 * <p>The Vector API classes are referenced only from branches taken when the incubator module is in
 * the boot layer, so on a JVM started without {@code --add-modules jdk.incubator.vector} they are
 * never loaded. {@code -Dpagewarden.kernels=scalar} forces the fallback (benchmarks, debugging).
 */
final class Kernels {
    private Kernels() {
    }

    /** True when the Vector API kernels are in use. */
    static final boolean VECTOR = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
            && !"scalar".equals(System.getProperty("pagewarden.kernels"));

    /** The kernels in use. */
    static final RowKernels ROWS = VECTOR ? vector() : ScalarKernels.INSTANCE;

    // Separate method so that the verifier of this class never needs VectorKernels.
    private static RowKernels vector() {
        return VectorKernels.INSTANCE;
    }
}
