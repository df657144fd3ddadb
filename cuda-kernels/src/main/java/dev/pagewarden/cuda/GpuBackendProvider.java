package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.load.LoadedModel;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.JCudaDriver;

import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The GPU backend, for {@code --backend gpu}, and preferred by {@code auto} where it can run (it
 * outranks the CPU's priority 0). Availability is probed once per process, without a context: the
 * JCuda driver binding must load (it needs libcuda.so.1 from an NVIDIA driver), the driver must
 * support CUDA 13.0, and GPU 0 must have compute capability 8.0 or newer.
 */
public final class GpuBackendProvider implements BackendProvider {
    private static volatile String unavailable;
    private static volatile boolean probed;

    /** Shared by every backend this process creates: one context, one device thread. */
    private static CudaDevice device;
    private static final Map<LoadedModel, Upload> UPLOADS = new IdentityHashMap<>();

    private static final class Upload {
        final DeviceWeights weights;
        int refs;

        Upload(DeviceWeights weights) {
            this.weights = weights;
        }
    }

    @Override
    public String name() {
        return "gpu";
    }

    @Override
    public boolean available() {
        return probe() == null;
    }

    @Override
    public String unavailableReason() {
        String r = probe();
        return r == null ? "" : r;
    }

    @Override
    public int priority() {
        return 100;
    }

    /** Null when a usable GPU is here, else why not (probed once). */
    static String probe() {
        if (!probed) {
            synchronized (GpuBackendProvider.class) {
                if (!probed) {
                    unavailable = detect();
                    probed = true;
                }
            }
        }
        return unavailable;
    }

    private static String detect() {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return "the engine jar carries JCuda natives for linux-x86_64 only, this is " + os + "/" + arch;
        }
        try {
            JCudaDriver.setExceptionsEnabled(true);
            JCudaDriver.cuInit(0);
            int[] version = new int[1];
            JCudaDriver.cuDriverGetVersion(version);
            int[] count = new int[1];
            JCudaDriver.cuDeviceGetCount(count);
            int major = 0;
            int minor = 0;
            if (count[0] > 0) {
                CUdevice dev = new CUdevice();
                JCudaDriver.cuDeviceGet(dev, 0);
                int[] v = new int[1];
                JCudaDriver.cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
                major = v[0];
                JCudaDriver.cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
                minor = v[0];
            }
            return CudaRequirements.unmet(version[0], count[0], major, minor);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError | ExceptionInInitializerError e) {
            return "no CUDA driver: the JCuda driver binding could not load libcuda.so.1 (no NVIDIA driver on this machine?): "
                    + firstLine(e);
        } catch (jcuda.CudaException e) {
            return "the CUDA driver refused to start: " + firstLine(e);
        }
    }

    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return (nl < 0 ? m : m.substring(0, nl)).strip();
    }

    /**
     * The device kernels run every architecture the CPU does (llama with or without RoPE scaling,
     * mistral as llama, qwen2's Q/K/V biases, qwen3's per-head Q/K norms and head size) and multiply by
     * the weight types of {@link WeightPacking#TYPES}, plus those of {@link QuantPacking#TYPES} with the
     * tensor-core kernels on ({@link GpuBackend#GEMM}): a model with other matrix types is refused.
     */
    @Override
    public String refusal(LoadedModel model) {
        return refusal(model, GpuBackend.GEMM);
    }

    static String refusal(LoadedModel model, boolean gemm) {
        EnumSet<DType> types = EnumSet.copyOf(model.weights().matrixTypes());
        types.removeAll(WeightPacking.TYPES);
        EnumSet<DType> tiled = types.isEmpty() ? EnumSet.noneOf(DType.class) : EnumSet.copyOf(types);
        tiled.retainAll(QuantPacking.TYPES);
        types.removeAll(QuantPacking.TYPES);
        if (!types.isEmpty()) {
            return "its kernels multiply by " + WeightPacking.TYPES + " weights, and " + QuantPacking.TYPES
                    + " through the tensor-core GEMM; this model has " + types + " matrices and needs backend 'cpu'";
        }
        if (!tiled.isEmpty() && !gemm) {
            return "its " + tiled + " matrices need the tensor-core GEMM, off unless -D" + GpuBackend.GEMM_PROPERTY
                    + "=true; without it this model needs backend 'cpu'";
        }
        return null;
    }

    @Override
    public Backend create(LoadedModel model, BackendOptions options) {
        String refused = refusal(model);
        if (refused != null) {
            throw new IllegalArgumentException("backend 'gpu' cannot run this model: " + refused);
        }
        String why = probe();
        if (why != null) {
            throw new IllegalStateException("backend 'gpu' is not available here: " + why);
        }
        synchronized (GpuBackendProvider.class) {
            if (device == null || device.isClosed()) {
                device = CudaDevice.open();
            }
            CudaDevice d = device;
            d.retain();
            Upload u = UPLOADS.get(model);
            if (u == null) {
                try {
                    u = new Upload(DeviceWeights.upload(d, model.weights()));
                } catch (RuntimeException | Error e) {
                    release(d);
                    throw e;
                }
                UPLOADS.put(model, u);
            }
            u.refs++;
            Upload upload = u;
            return new GpuBackend(d, upload.weights, model.weights(), () -> {
                synchronized (GpuBackendProvider.class) {
                    if (--upload.refs == 0) {
                        UPLOADS.remove(model);
                        upload.weights.free(d);
                    }
                    release(d);
                }
            });
        }
    }

    private static void release(CudaDevice d) {
        if (d.release() && device == d) {
            device = null;
        }
    }
}
