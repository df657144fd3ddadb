/**
 * The GPU backend: CUDA kernels (sources in {@code src/main/cuda}, committed cubin/PTX in the
 * resources) driven through the JCuda driver API. One CUDA context per process on a dedicated
 * thread ({@link dev.pagewarden.cuda.CudaDevice}); weights uploaded once; the KV pool and its owner
 * tags in device memory ({@link dev.pagewarden.cuda.GpuKvStorage}); the kernels verify every page
 * they touch against those tags.
 */
package dev.pagewarden.cuda;
