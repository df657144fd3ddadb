package dev.pagewarden.cuda;

import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * With -Dpagewarden.gpu.kernelTiming=true: a CUDA event before and after every kernel a step launches,
 * read once the step has synchronized and summed per (step rows, kernel); printed at close as one
 * {@code gpu-kernel} line per kernel, the largest first, so the next change is aimed by a measurement.
 * Steps then run launch by launch (no CUDA graphs). Used only on the device thread.
 */
final class KernelTiming {
    /** Two events per launch of the step being timed, created as needed and reused step after step. */
    private final List<CUevent> events = new ArrayList<>();
    private final List<String> names = new ArrayList<>();
    private int launches;
    private final TreeMap<Integer, Map<String, double[]>> byRows = new TreeMap<>();
    private final TreeMap<Integer, Integer> steps = new TreeMap<>();

    /** A step's launches start: what was recorded but never read (a step that threw) is dropped. */
    void begin() {
        launches = 0;
    }

    void before(String kernel, CUstream stream) {
        if (2 * launches + 2 > events.size()) {
            for (int i = 0; i < 2; i++) {
                CUevent e = new CUevent();
                JCudaDriver.cuEventCreate(e, 0);
                events.add(e);
            }
        }
        if (launches < names.size()) {
            names.set(launches, kernel);
        } else {
            names.add(kernel);
        }
        JCudaDriver.cuEventRecord(events.get(2 * launches), stream);
    }

    void after(CUstream stream) {
        JCudaDriver.cuEventRecord(events.get(2 * launches + 1), stream);
        launches++;
    }

    /** After the step's synchronize: its launches' times into the sums of steps of {@code rows} token rows. */
    void stepDone(int rows) {
        float[] ms = new float[1];
        List<String> kernels = new ArrayList<>(launches);
        double[] times = new double[launches];
        for (int i = 0; i < launches; i++) {
            JCudaDriver.cuEventElapsedTime(ms, events.get(2 * i), events.get(2 * i + 1));
            kernels.add(names.get(i));
            times[i] = ms[0];
        }
        launches = 0;
        add(rows, kernels, times);
    }

    /** One step of {@code rows} token rows: its launches in order and each one's milliseconds. */
    void add(int rows, List<String> kernels, double[] ms) {
        Map<String, double[]> sums = byRows.computeIfAbsent(rows, r -> new TreeMap<>());
        for (int i = 0; i < kernels.size(); i++) {
            double[] a = sums.computeIfAbsent(kernels.get(i), k -> new double[2]);
            a[0]++;
            a[1] += ms[i];
        }
        steps.merge(rows, 1, Integer::sum);
    }

    /** The table, per step size: launches and milliseconds a step, share of the step's kernel time. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        byRows.forEach((rows, sums) -> {
            int n = steps.get(rows);
            double total = sums.values().stream().mapToDouble(a -> a[1]).sum();
            sums.entrySet().stream().sorted((x, y) -> Double.compare(y.getValue()[1], x.getValue()[1])).forEach(e ->
                    out.add(String.format(Locale.ROOT, "gpu-kernel rows=%d steps=%d kernel=%s launches=%.1f ms=%.4f share=%.1f%%",
                            rows, n, e.getKey(), e.getValue()[0] / n, e.getValue()[1] / n, 100 * e.getValue()[1] / total)));
        });
        return out;
    }

    void close() {
        events.forEach(JCudaDriver::cuEventDestroy);
        events.clear();
    }
}
