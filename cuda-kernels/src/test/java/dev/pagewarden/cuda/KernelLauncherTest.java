package dev.pagewarden.cuda;

import jcuda.CudaException;
import jcuda.NativePointerObject;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The FFM kernel launcher against a stand-in for the driver's {@code cuLaunchKernel} (an upcall with
 * the same C signature), so the argument marshalling is checked here, without a GPU: every value
 * the "driver" reads through the parameter pointers, the launch shape, the handles.
 */
class KernelLauncherTest {
    /** What the stand-in saw on its last call. */
    static long function;
    static long stream;
    static int[] shape;
    static MemorySegment params;
    static long extra;
    static int result;

    private Arena arena;
    private KernelLauncher launcher;

    static int fakeLaunch(MemorySegment f, int gx, int gy, int gz, int bx, int by, int bz, int shared, MemorySegment s,
                          MemorySegment kernelParams, MemorySegment extraOptions) {
        function = f.address();
        stream = s.address();
        shape = new int[] {gx, gy, gz, bx, by, bz, shared};
        params = kernelParams.reinterpret(8L * KernelLauncher.MAX_ARGS);
        extra = extraOptions.address();
        return result;
    }

    @BeforeEach
    void standIn() throws Exception {
        arena = Arena.ofShared();
        var target = MethodHandles.lookup().findStatic(KernelLauncherTest.class, "fakeLaunch",
                MethodType.methodType(int.class, MemorySegment.class, int.class, int.class, int.class, int.class, int.class,
                        int.class, int.class, MemorySegment.class, MemorySegment.class, MemorySegment.class));
        launcher = new KernelLauncher(Linker.nativeLinker().upcallStub(target, KernelLauncher.CU_LAUNCH_KERNEL, arena));
        result = CUresult.CUDA_SUCCESS;
    }

    @AfterEach
    void close() {
        launcher.close();
        arena.close();
    }

    /** A JCuda handle that stands for {@code address}, as the driver would have filled it in. */
    static <T extends NativePointerObject> T handle(T object, long address) throws Exception {
        VarHandle h = MethodHandles.privateLookupIn(NativePointerObject.class, MethodHandles.lookup())
                .findVarHandle(NativePointerObject.class, "nativePointer", long.class);
        h.set(object, address);
        return object;
    }

    /** The value the driver reads for argument {@code i}: through the i-th pointer of the parameter array. */
    static MemorySegment arg(int i) {
        return params.getAtIndex(ValueLayout.ADDRESS, i).reinterpret(8);
    }

    @Test
    void everyArgumentReachesTheDriverByValueThroughItsPointer() throws Exception {
        CUfunction fn = handle(new CUfunction(), 0x7000_1000L);
        CUstream st = handle(new CUstream(), 0x7000_2000L);
        CUdeviceptr base = handle(new CUdeviceptr(), 0x7f00_0000_0000L);

        launcher.launch(fn, 12, 34, 128, 4096, st, base, base.withByteOffset(4096), null, 7, -3L, 1.5f, Integer.MIN_VALUE);

        assertThat(function).isEqualTo(0x7000_1000L);
        assertThat(stream).isEqualTo(0x7000_2000L);
        assertThat(shape).containsExactly(12, 34, 1, 128, 1, 1, 4096);
        assertThat(extra).isZero();
        assertThat(arg(0).get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0x7f00_0000_0000L);
        assertThat(arg(1).get(ValueLayout.JAVA_LONG, 0)).as("a pointer's byte offset is added").isEqualTo(0x7f00_0000_1000L);
        assertThat(arg(2).get(ValueLayout.JAVA_LONG, 0)).as("null is a null device pointer").isZero();
        assertThat(arg(3).get(ValueLayout.JAVA_INT, 0)).isEqualTo(7);
        assertThat(arg(4).get(ValueLayout.JAVA_LONG, 0)).isEqualTo(-3L);
        assertThat(arg(5).get(ValueLayout.JAVA_FLOAT, 0)).isEqualTo(1.5f);
        assertThat(arg(6).get(ValueLayout.JAVA_INT, 0)).isEqualTo(Integer.MIN_VALUE);
    }

    @Test
    void aLaterLaunchSendsItsOwnValues() throws Exception {
        CUfunction fn = handle(new CUfunction(), 0x10L);
        CUstream st = handle(new CUstream(), 0x20L);
        launcher.launch(fn, 1, 1, 32, 0, st, 1, 2, 3);
        launcher.launch(fn, 5, 1, 64, 0, st, 9L, 8.25f);

        assertThat(shape).containsExactly(5, 1, 1, 64, 1, 1, 0);
        assertThat(arg(0).get(ValueLayout.JAVA_LONG, 0)).isEqualTo(9L);
        assertThat(arg(1).get(ValueLayout.JAVA_FLOAT, 0)).isEqualTo(8.25f);
    }

    @Test
    void aDriverErrorThrowsWithItsName() throws Exception {
        result = CUresult.CUDA_ERROR_INVALID_VALUE;
        CUfunction fn = handle(new CUfunction(), 0x10L);
        assertThatThrownBy(() -> launcher.launch(fn, 1, 1, 32, 0, new CUstream(), 1))
                .isInstanceOf(CudaException.class).hasMessageContaining("CUDA_ERROR_INVALID_VALUE");
    }

    @Test
    void badArgumentsAreRefusedBeforeTheDriverIsCalled() throws Exception {
        CUfunction fn = handle(new CUfunction(), 0x10L);
        shape = null;
        assertThatThrownBy(() -> launcher.launch(fn, 1, 1, 32, 0, new CUstream(), "text"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("String");
        assertThatThrownBy(() -> launcher.launch(fn, 1, 1, 32, 0, new CUstream(), new Object[KernelLauncher.MAX_ARGS + 1]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most " + KernelLauncher.MAX_ARGS);
        assertThat(shape).as("the driver was not called").isNull();
    }
}
