package dev.pagewarden.cuda;

/**
 * What the committed kernels need from a machine, decided from plain numbers so that the decision is
 * tested everywhere, GPU or not. The PTX and cubin are built by CUDA 13.0 (PTX ISA 9.0): a driver
 * older than CUDA 13.0 cannot load them; the PTX targets compute_80, so a device below 8.0 cannot run it.
 */
public final class CudaRequirements {
    /** cuDriverGetVersion of CUDA 13.0. */
    public static final int MIN_DRIVER_VERSION = 13000;
    public static final int MIN_COMPUTE_MAJOR = 8;

    private CudaRequirements() {
    }

    /** Null when the machine can run the kernels, else why not. */
    public static String unmet(int driverVersion, int deviceCount, int ccMajor, int ccMinor) {
        if (driverVersion < MIN_DRIVER_VERSION) {
            return "the CUDA driver supports CUDA " + versionText(driverVersion)
                    + "; PTX built with CUDA 13.0 needs a driver for CUDA 13.0 or newer";
        }
        if (deviceCount < 1) {
            return "the CUDA driver reports no GPU";
        }
        if (ccMajor < MIN_COMPUTE_MAJOR) {
            return "GPU 0 has compute capability " + ccMajor + "." + ccMinor + "; the kernels need 8.0 or newer";
        }
        return null;
    }

    /** Whether the sm_90 cubin fits the device as is (else the driver compiles the PTX). */
    public static boolean cubinFits(int ccMajor, int ccMinor) {
        return ccMajor == 9 && ccMinor == 0;
    }

    /** 12060 -> "12.6". */
    public static String versionText(int driverVersion) {
        return (driverVersion / 1000) + "." + (driverVersion % 1000) / 10;
    }
}
