package dev.pagewarden.cuda;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static jcuda.driver.JCudaDriver.*;

/**
 * GPU 0 of this process: its primary context, bound to one dedicated thread that makes every CUDA
 * call (a context is current per thread, and one thread keeps the call order obvious), one stream,
 * and the kernel modules. JCuda exceptions are on, so every failed CUDA call throws at once.
 * Reference-counted by the provider; the last {@link #release} frees everything deterministically.
 */
final class CudaDevice {
    static final String[] MODULES = {"ops", "matvec", "gemm", "attention", "pages", "quant"};

    private final ExecutorService thread;
    private Thread owner;
    private CUdevice device;
    private CUcontext context;
    private CUstream stream;
    /** Set only while a step's kernels are launched with kernel timing on. */
    private KernelTiming kernelTiming;
    private final List<CUmodule> modules = new ArrayList<>();
    private final Map<String, CUfunction> functions = new HashMap<>();
    private String name;
    private int ccMajor;
    private int ccMinor;
    private int driverVersion;
    private int maxSharedOptin;
    private boolean usesCubin;
    /** Null with -Dpagewarden.gpu.launch=jcuda: launches then go through JCuda's cuLaunchKernel. */
    private KernelLauncher launcher;
    private int refs;

    private CudaDevice() {
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "pagewarden-cuda-0");
            t.setDaemon(true);
            return t;
        });
    }

    /** Initialises the driver, context, stream and modules on the device thread. */
    static CudaDevice open() {
        CudaDevice d = new CudaDevice();
        try {
            d.call(() -> {
                d.owner = Thread.currentThread();
                d.init();
                return null;
            });
        } catch (RuntimeException | Error e) {
            d.thread.shutdownNow();
            throw e;
        }
        return d;
    }

    private void init() {
        JCudaDriver.setExceptionsEnabled(true);
        cuInit(0);
        int[] v = new int[1];
        cuDriverGetVersion(v);
        driverVersion = v[0];
        int[] count = new int[1];
        cuDeviceGetCount(count);
        device = new CUdevice();
        if (count[0] > 0) {
            cuDeviceGet(device, 0);
            ccMajor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
            ccMinor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        }
        String unmet = CudaRequirements.unmet(driverVersion, count[0], ccMajor, ccMinor);
        if (unmet != null) {
            throw new IllegalStateException(unmet);
        }
        byte[] nameBytes = new byte[256];
        cuDeviceGetName(nameBytes, nameBytes.length, device);
        int len = 0;
        while (len < nameBytes.length && nameBytes[len] != 0) {
            len++;
        }
        name = new String(nameBytes, 0, len, java.nio.charset.StandardCharsets.US_ASCII);
        maxSharedOptin = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
        context = new CUcontext();
        cuDevicePrimaryCtxRetain(context, device);
        cuCtxSetCurrent(context);
        stream = new CUstream();
        cuStreamCreate(stream, 0);
        KernelManifest manifest = KernelManifest.load();
        usesCubin = CudaRequirements.cubinFits(ccMajor, ccMinor);
        for (String m : MODULES) {
            CUmodule module = new CUmodule();
            if (usesCubin) {
                cuModuleLoadData(module, manifest.verifiedOutput(m + "." + manifest.cubinArch() + ".cubin"));
            } else {
                byte[] ptx = manifest.verifiedOutput(m + "." + manifest.ptxArch() + ".ptx");
                cuModuleLoadData(module, Arrays.copyOf(ptx, ptx.length + 1)); // the driver wants a C string
            }
            modules.add(module);
        }
        if (!"jcuda".equals(System.getProperty("pagewarden.gpu.launch", "ffm"))) {
            launcher = KernelLauncher.ofDriver();
        }
        // attention keeps a sequence's scores in shared memory: allow what the device allows
        for (String fn : new String[] {"pw_attention", "pw_attention_rows"}) {
            cuFuncSetAttribute(function(fn), CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    maxSharedOptin - 1024);
        }
    }

    private int attribute(int attr) {
        int[] v = new int[1];
        cuDeviceGetAttribute(v, attr, device);
        return v[0];
    }

    /** Runs {@code task} on the device thread (directly when already on it) and returns its result. */
    <T> T call(Callable<T> task) {
        if (Thread.currentThread() == owner) {
            try {
                return task.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        Future<T> f = thread.submit(task);
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the GPU", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException re) {
                throw re;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(c);
        }
    }

    void run(Runnable task) {
        call(() -> {
            task.run();
            return null;
        });
    }

    CUfunction function(String fn) {
        return functions.computeIfAbsent(fn, n -> {
            for (CUmodule m : modules) {
                CUfunction f = new CUfunction();
                try {
                    cuModuleGetFunction(f, m, n);
                    return f;
                } catch (jcuda.CudaException notHere) {
                    // CUDA_ERROR_NOT_FOUND: in another module
                }
            }
            throw new IllegalStateException("kernel " + n + " is in no module; rebuild the kernels");
        });
    }

    /**
     * Launches {@code fn} on the stream. Arguments: {@link CUdeviceptr} (null for a null pointer),
     * Integer, Long, Float - in the kernel's parameter order.
     */
    void launch(String fn, int gridX, int gridY, int block, int sharedBytes, Object... args) {
        if (gridX <= 0 || gridY <= 0) {
            throw new IllegalArgumentException("empty grid " + gridX + "x" + gridY + " for " + fn);
        }
        KernelTiming t = kernelTiming;
        if (t != null) {
            t.before(fn, stream);
        }
        if (launcher != null) {
            launcher.launch(function(fn), gridX, gridY, block, sharedBytes, stream, args);
        } else {
            Pointer[] params = new Pointer[args.length];
            for (int i = 0; i < args.length; i++) {
                params[i] = switch (args[i]) {
                    case null -> Pointer.to(new CUdeviceptr());
                    case CUdeviceptr p -> Pointer.to(p);
                    case Integer n -> Pointer.to(new int[] {n});
                    case Long n -> Pointer.to(new long[] {n});
                    case Float n -> Pointer.to(new float[] {n});
                    default -> throw new IllegalArgumentException("kernel argument of type " + args[i].getClass());
                };
            }
            cuLaunchKernel(function(fn), gridX, gridY, 1, block, 1, 1, sharedBytes, stream, Pointer.to(params), null);
        }
        if (t != null) {
            t.after(stream);
        }
    }

    /** Times every launch with {@code t} until called again with null (on the device thread, around a step's kernels). */
    void timeKernels(KernelTiming t) {
        kernelTiming = t;
    }

    /** How kernels are launched: "ffm" (direct downcall) or "jcuda". */
    String launchPath() {
        return launcher != null ? "ffm" : "jcuda";
    }

    CUstream stream() {
        return stream;
    }

    void sync() {
        cuStreamSynchronize(stream);
    }

    /** Device memory, never managed memory. */
    CUdeviceptr alloc(long bytes) {
        CUdeviceptr p = new CUdeviceptr();
        cuMemAlloc(p, Math.max(bytes, 1));
        return p;
    }

    void free(CUdeviceptr p) {
        if (p != null) {
            cuMemFree(p);
        }
    }

    /** Page-locked host memory for copies that overlap nothing and never bounce through a driver buffer. */
    record Pinned(Pointer pointer, ByteBuffer buffer, MemorySegment segment, long bytes) {
    }

    Pinned pinned(long bytes) {
        Pointer p = new Pointer();
        cuMemAllocHost(p, bytes);
        ByteBuffer b = p.getByteBuffer(0, bytes);
        return new Pinned(p, b, MemorySegment.ofBuffer(b), bytes);
    }

    void free(Pinned p) {
        if (p != null) {
            cuMemFreeHost(p.pointer());
        }
    }

    void copyToDevice(CUdeviceptr dst, Pinned src, long srcOffset, long bytes) {
        cuMemcpyHtoDAsync(dst, src.pointer().withByteOffset(srcOffset), bytes, stream);
    }

    void copyToHost(Pinned dst, long dstOffset, CUdeviceptr src, long bytes) {
        cuMemcpyDtoHAsync(dst.pointer().withByteOffset(dstOffset), src, bytes, stream);
    }

    void zero(CUdeviceptr dst, long bytes) {
        cuMemsetD32Async(dst, 0, bytes / 4, stream);
    }

    String name() {
        return name;
    }

    int computeMajor() {
        return ccMajor;
    }

    int computeMinor() {
        return ccMinor;
    }

    int driverVersion() {
        return driverVersion;
    }

    int maxSharedBytes() {
        return maxSharedOptin - 1024;
    }

    boolean usesCubin() {
        return usesCubin;
    }

    long freeMemory() {
        return memoryInfo()[0];
    }

    /** {free, total} bytes of device memory (cuMemGetInfo; on the device thread). */
    long[] memoryInfo() {
        long[] free = new long[1];
        long[] total = new long[1];
        cuMemGetInfo(free, total);
        return new long[] {free[0], total[0]};
    }

    /**
     * Device-to-device copy bandwidth in bytes/s, counting bytes read plus bytes written (the
     * roofline a memory-bound decode step is measured against), median of {@code reps} copies.
     */
    double copyBandwidth(long bytes, int reps) {
        return call(() -> {
            CUdeviceptr a = alloc(bytes);
            CUdeviceptr b = alloc(bytes);
            jcuda.driver.CUevent start = new jcuda.driver.CUevent();
            jcuda.driver.CUevent stop = new jcuda.driver.CUevent();
            cuEventCreate(start, 0);
            cuEventCreate(stop, 0);
            try {
                cuMemcpyDtoDAsync(b, a, bytes, stream); // warm-up
                float[] ms = new float[reps];
                float[] t = new float[1];
                for (int i = 0; i < reps; i++) {
                    cuEventRecord(start, stream);
                    cuMemcpyDtoDAsync(b, a, bytes, stream);
                    cuEventRecord(stop, stream);
                    cuEventSynchronize(stop);
                    cuEventElapsedTime(t, start, stop);
                    ms[i] = t[0];
                }
                Arrays.sort(ms);
                return 2.0 * bytes / (ms[reps / 2] / 1000.0);
            } finally {
                sync();
                cuEventDestroy(start);
                cuEventDestroy(stop);
                free(a);
                free(b);
            }
        });
    }

    synchronized boolean isClosed() {
        return thread.isShutdown();
    }

    synchronized void retain() {
        refs++;
    }

    /** Drops one reference; the last one unloads the modules, destroys the stream and lets the context go. */
    synchronized boolean release() {
        if (--refs > 0) {
            return false;
        }
        try {
            run(() -> {
                sync();
                for (CUmodule m : modules) {
                    cuModuleUnload(m);
                }
                modules.clear();
                functions.clear();
                if (launcher != null) {
                    launcher.close();
                    launcher = null;
                }
                cuStreamDestroy(stream);
                cuDevicePrimaryCtxRelease(device);
            });
        } finally {
            thread.shutdown();
        }
        return true;
    }
}
