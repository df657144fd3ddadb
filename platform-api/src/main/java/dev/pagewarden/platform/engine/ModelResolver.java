package dev.pagewarden.platform.engine;

import dev.pagewarden.core.download.DownloadException;
import dev.pagewarden.core.download.ModelDownloader;
import dev.pagewarden.core.download.ProgressListener;
import dev.pagewarden.core.download.ResolvedModel;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.net.URI;
import java.nio.file.Path;

/**
 * Turns the configured model source into files on disk: as given, or a named model downloaded on
 * first start into {@code <home>/models} (checksum-verified, resumable; later starts need no
 * network). A name is one of the download registry's ({@code stories260K}) or a Hugging Face
 * reference, {@code org/repo:file.gguf} or {@code org/repo} for a safetensors repository (either
 * with {@code @revision}); such a model's id is the file name without extension, or the
 * repository's name, unless one is configured. A download that fails leaves the platform running
 * without a model, saying why.
 */
@Component
class ModelResolver {
    private static final Logger LOG = LoggerFactory.getLogger(ModelResolver.class);

    private final PagewardenProperties properties;

    ModelResolver(PagewardenProperties properties) {
        this.properties = properties;
    }

    /** Files to load, or the reason there are none. */
    sealed interface Outcome {
    }

    record Resolved(String id, Path model, Path tokenizer) implements Outcome {
    }

    record Unavailable(String reason) implements Outcome {
    }

    Outcome resolve(ModelSource source) {
        return switch (source) {
            case ModelSource.Local l -> new Resolved(l.id(), l.model(), l.tokenizer());
            case ModelSource.Named n -> download(n);
            case ModelSource.None none -> new Unavailable("no model is configured: set PAGEWARDEN_MODEL_PATH (and "
                    + "PAGEWARDEN_MODEL_TOKENIZER for a llama2.c .bin) or PAGEWARDEN_MODEL_NAME (e.g. stories260K, or a "
                    + "Hugging Face org/repo:file.gguf or org/repo), then restart");
        };
    }

    private Outcome download(ModelSource.Named n) {
        String endpoint = properties.model().downloadEndpoint();
        // The token comes from HF_TOKEN either way; the configured endpoint, when set, wins over the environment's.
        ModelDownloader downloader = endpoint == null || endpoint.isBlank() ? ModelDownloader.fromEnvironment()
                : ModelDownloader.builder().environment(System.getenv()).endpoint(URI.create(endpoint)).build();
        Path dir = properties.modelsDir();
        LOG.info("model '{}': checking {} (downloading from {} if missing)", n.name(), dir, downloader.endpoint());
        try {
            ResolvedModel m = downloader.ensure(n.name(), dir, new LoggingProgress());
            return new Resolved(n.id(), m.model(), m.tokenizer());
        } catch (DownloadException | IllegalArgumentException e) {
            LOG.error("model '{}' could not be fetched: {}", n.name(), e.getMessage());
            return new Unavailable("model '" + n.name() + "' could not be fetched: " + e.getMessage()
                    + " (place the files yourself and set PAGEWARDEN_MODEL_PATH, or fix the network and restart)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Unavailable("model download interrupted");
        }
    }

    /** A progress bar for the log: one line per 10% of each file. */
    private static final class LoggingProgress implements ProgressListener {
        private String file;
        private int lastDecile = -1;

        @Override
        public void progress(String name, long done, long total) {
            if (!name.equals(file)) {
                file = name;
                lastDecile = -1;
            }
            if (total <= 0) {
                return;
            }
            int decile = (int) (done * 10 / total);
            if (decile != lastDecile) {
                lastDecile = decile;
                int pct = decile * 10;
                LOG.info("downloading {} [{}{}] {}% of {} MiB", name, "#".repeat(decile), ".".repeat(10 - decile), pct,
                        String.format("%.1f", total / 1048576.0));
            }
        }

        @Override
        public void message(String line) {
            LOG.info(line);
        }
    }
}
