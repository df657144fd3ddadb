package dev.pagewarden.cuda;

import jcuda.CudaException;
import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * {@code cuLaunchKernel} called through the FFM API instead of JCuda. A step launches a few hundred
 * kernels, and the first H200 run showed JCuda's launch path at 12-15 us each (it marshals the
 * argument pointers through JNI on every call): the GPU waited for the host. Here the kernel
 * arguments go into one native block whose pointer array is filled once, so a launch writes the
 * argument values and makes one downcall. Everything else (contexts, memory, copies) stays on JCuda,
 * in the same process and context: both call the same {@code libcuda}.
 *
 * <p>Not thread-safe: one launcher per device thread, as {@link CudaDevice} makes every call there.
 */
final class KernelLauncher implements AutoCloseable {
    /** CUresult cuLaunchKernel(CUfunction, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes, CUstream, void** params, void** extra). */
    static final FunctionDescriptor CU_LAUNCH_KERNEL = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT,
            JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    static final int MAX_ARGS = 32;

    /** JCuda keeps a handle's address (and a pointer's offset) in private fields; read them, never write. */
    private static final VarHandle NATIVE_POINTER;
    private static final VarHandle BYTE_OFFSET;

    static {
        try {
            NATIVE_POINTER = MethodHandles.privateLookupIn(NativePointerObject.class, MethodHandles.lookup())
                    .findVarHandle(NativePointerObject.class, "nativePointer", long.class);
            BYTE_OFFSET = MethodHandles.privateLookupIn(Pointer.class, MethodHandles.lookup())
                    .findVarHandle(Pointer.class, "byteOffset", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError("this JCuda version hides handle addresses differently: " + e);
        }
    }

    private final Arena arena;
    private final MethodHandle launch;
    private final MemorySegment values;
    private final MemorySegment pointers;

    /** A launcher that calls the function at {@code cuLaunchKernel} (the driver's, or a test's stand-in). */
    KernelLauncher(MemorySegment cuLaunchKernel) {
        this.arena = Arena.ofShared();
        this.launch = Linker.nativeLinker().downcallHandle(cuLaunchKernel, CU_LAUNCH_KERNEL);
        // one 8-byte slot per argument (the widest kernel argument type here) and its address, filled once
        this.values = arena.allocate(8L * MAX_ARGS, 16);
        this.pointers = arena.allocate(ADDRESS.byteSize() * MAX_ARGS, 16);
        for (int i = 0; i < MAX_ARGS; i++) {
            pointers.setAtIndex(ADDRESS, i, values.asSlice(8L * i, 8));
        }
    }

    /** The driver's launcher; the driver library is already loaded by JCuda (same handle). */
    static KernelLauncher ofDriver() {
        MemorySegment fn = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global()).find("cuLaunchKernel")
                .orElseThrow(() -> new IllegalStateException("libcuda.so.1 has no cuLaunchKernel"));
        return new KernelLauncher(fn);
    }

    /** The address a JCuda handle or device pointer stands for (a pointer's byte offset included). */
    static long address(NativePointerObject p) {
        long a = (long) NATIVE_POINTER.get(p);
        return p instanceof Pointer ptr ? a + (long) BYTE_OFFSET.get(ptr) : a;
    }

    /**
     * Launches {@code function} on {@code stream} with a {@code gridX x gridY} grid of {@code block}
     * threads. Arguments as {@link CudaDevice#launch}: {@link CUdeviceptr} (null: a null pointer),
     * Integer, Long, Float, in the kernel's parameter order. A failed launch throws with the driver's
     * error name, as JCuda's checked calls do.
     */
    void launch(NativePointerObject function, int gridX, int gridY, int block, int sharedBytes, NativePointerObject stream,
                Object... args) {
        if (args.length > MAX_ARGS) {
            throw new IllegalArgumentException(args.length + " kernel arguments; at most " + MAX_ARGS);
        }
        for (int i = 0; i < args.length; i++) {
            long at = 8L * i;
            switch (args[i]) {
                case null -> values.set(ValueLayout.JAVA_LONG, at, 0L);
                case CUdeviceptr p -> values.set(ValueLayout.JAVA_LONG, at, address(p));
                case Integer n -> values.set(ValueLayout.JAVA_INT, at, n);
                case Long n -> values.set(ValueLayout.JAVA_LONG, at, n);
                case Float n -> values.set(ValueLayout.JAVA_FLOAT, at, n);
                default -> throw new IllegalArgumentException("kernel argument of type " + args[i].getClass());
            }
        }
        int rc;
        try {
            rc = (int) launch.invokeExact(MemorySegment.ofAddress(address(function)), gridX, gridY, 1, block, 1, 1,
                    sharedBytes, MemorySegment.ofAddress(address(stream)), pointers, MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IllegalStateException("cuLaunchKernel downcall failed", t);
        }
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new CudaException(CUresult.stringFor(rc));
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
