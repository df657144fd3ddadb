/**
 * CPU kernels of the engine: {@link dev.pagewarden.core.tensor.Parallel} (a low-latency fork/join
 * pool with contiguous chunks), {@link dev.pagewarden.core.tensor.MatMul} (matrix times a batch of
 * vectors for F32, F16 and Q8_0 weights), {@link dev.pagewarden.core.tensor.Ops} (norms, softmax,
 * activations) and {@link dev.pagewarden.core.tensor.Bandwidth} (the memory read rate they are
 * measured against); {@link dev.pagewarden.core.tensor.KernelBench} benchmarks them.
 *
 * <p>Determinism is a contract, not an accident: every output value is computed by exactly one
 * thread, with an accumulation order that depends only on the vector length, never on batch size,
 * batch position, thread count, JIT tier (interpreter, C1, C2) or weight alignment. Hence no
 * {@code reduceLanes} (its order is unspecified), {@code fma} and lanewise operations only, and
 * {@link java.lang.StrictMath#exp}. The Vector API code lives in classes that are loaded only when
 * {@code jdk.incubator.vector} is in the boot layer; otherwise plain-Java kernels with the same
 * contract run.
 */
package dev.pagewarden.core.tensor;
