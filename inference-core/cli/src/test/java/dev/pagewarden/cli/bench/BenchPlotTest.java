package dev.pagewarden.cli.bench;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class BenchPlotTest {

    private static Map<String, Object> report(boolean hostProbe) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("model", "m.gguf");
        r.put("backend", hostProbe ? "cpu" : "gpu");
        r.put("threads", 2);
        r.put("weight_bytes_per_token", 440_000_000L);
        if (hostProbe) {
            r.put("mem_read_gbs", 44.0);
        }
        Map<String, Object> decode = new LinkedHashMap<>();
        decode.put("1", 80.0);
        decode.put("8", 400.0);
        r.put("decode_tok_s", decode);
        return r;
    }

    @Test
    void aCpuReportGetsOneBandwidthCeilingPerBatch() {
        String svg = BenchPlot.svg(report(true));
        assertThat(svg.split("stroke-dasharray", -1)).hasSize(3);
        assertThat(svg).contains("44.0 GB/s", ">80.0<", ">400.0<");
    }

    /** A device backend's report carries no host probe: bars only, and the plot says why. */
    @Test
    void aReportWithoutHostProbeDrawsBarsWithoutCeilings() {
        String svg = BenchPlot.svg(report(false));
        assertThat(svg).doesNotContain("stroke-dasharray").doesNotContain("NaN")
                .contains("no host-memory ceiling", ">80.0<", ">400.0<");
    }
}
