package dev.pagewarden.cuda;

/** Measurements of the GPU itself, for the device check. */
public final class GpuDiagnostics {
    private GpuDiagnostics() {
    }

    /** Device-to-device copy bandwidth (bytes read + written per second) of 1 GiB copies, median of 9. */
    public static double copyBandwidth() {
        CudaDevice d = CudaDevice.open();
        d.retain();
        try {
            return d.copyBandwidth(1L << 30, 9);
        } finally {
            d.release();
        }
    }
}
