package dev.pagewarden.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The manifest {@code build-kernels.sh} writes beside the kernel binaries: SHA-256 of every CUDA
 * source and every output. The drift test compares sources against it; the loader checks each
 * binary against it before handing it to the driver.
 */
public record KernelManifest(String nvcc, String cubinArch, String ptxArch, Map<String, String> sources,
                             Map<String, String> outputs) {

    public static final String RESOURCE_DIR = "/dev/pagewarden/cuda/";
    public static final String REGENERATE = "cuda-kernels/build-kernels.sh";

    public KernelManifest {
        sources = Map.copyOf(sources);
        outputs = Map.copyOf(outputs);
    }

    public static KernelManifest parse(String text) {
        String nvcc = null;
        String cubin = null;
        String ptx = null;
        Map<String, String> sources = new LinkedHashMap<>();
        Map<String, String> outputs = new LinkedHashMap<>();
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "nvcc" -> nvcc = f[1];
                case "flags" -> { }
                case "cubin" -> cubin = f[1];
                case "ptx" -> ptx = f[1];
                case "source", "output" -> {
                    if (f.length != 3 || f[1].length() != 64) {
                        throw new IllegalArgumentException("kernel manifest line " + lineNo + " is malformed: " + line);
                    }
                    (f[0].equals("source") ? sources : outputs).put(f[2], f[1]);
                }
                default -> throw new IllegalArgumentException("kernel manifest line " + lineNo + ": unknown entry " + f[0]);
            }
        }
        if (nvcc == null || cubin == null || ptx == null || sources.isEmpty() || outputs.isEmpty()) {
            throw new IllegalArgumentException("kernel manifest is incomplete; regenerate it with " + REGENERATE);
        }
        return new KernelManifest(nvcc, cubin, ptx, sources, outputs);
    }

    /** The manifest packed in this jar. */
    public static KernelManifest load() {
        return parse(new String(resource("kernels.manifest"), StandardCharsets.UTF_8));
    }

    /** Bytes of a resource beside the manifest; a clear error when the build did not pack it. */
    public static byte[] resource(String name) {
        try (InputStream in = KernelManifest.class.getResourceAsStream(RESOURCE_DIR + name)) {
            if (in == null) {
                throw new IllegalStateException("kernel resource " + RESOURCE_DIR + name + " is missing from the jar; run "
                        + REGENERATE + " and rebuild");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The bytes of output {@code name}, after checking them against the manifest. */
    public byte[] verifiedOutput(String name) {
        String expected = outputs.get(name);
        if (expected == null) {
            throw new IllegalStateException("kernel binary " + name + " is not in the manifest; run " + REGENERATE);
        }
        byte[] bytes = resource(name);
        String actual = sha256(bytes);
        if (!actual.equals(expected)) {
            throw new IllegalStateException("kernel binary " + name + " has SHA-256 " + actual + ", the manifest says "
                    + expected + "; run " + REGENERATE + " and commit its outputs");
        }
        return bytes;
    }

    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
