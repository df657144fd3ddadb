package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.cli.tools.ProgressBar;
import dev.pagewarden.core.download.DownloadException;
import dev.pagewarden.core.download.HubReference;
import dev.pagewarden.core.download.ModelDownloader;
import dev.pagewarden.core.download.ModelSpec;
import dev.pagewarden.core.download.ProgressListener;
import dev.pagewarden.core.download.ResolvedModel;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * {@code download NAME}: fetches a named model and its tokenizer; {@code download ORG/REPO[@REV][:FILE]}
 * a Hugging Face GGUF file or a whole safetensors repository; verified either way (see {@link ModelDownloader}).
 */
public final class DownloadCommand implements Command {
    /** Files under a megabyte finish before a bar says anything useful. */
    private static final long BAR_MIN_BYTES = 1L << 20;

    @Override
    public String name() {
        return "download";
    }

    @Override
    public String usage() {
        return "download NAME|ORG/REPO[@REVISION]:FILE.gguf|ORG/REPO[@REVISION]|--list [--dir DIR (default "
                + "~/.pagewarden/models)] [--endpoint URL (default $PAGEWARDEN_HF_ENDPOINT, $HF_ENDPOINT or "
                + "https://huggingface.co)] [--token-file FILE (default: the token in $HF_TOKEN)] [--insecure-no-checksum] [--json]";
    }

    @Override
    public boolean positionalArguments() {
        return true;
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        List<String> names = args.positional();
        boolean list = args.flag("list");
        Path dir = Path.of(args.string("dir", ModelDownloader.defaultDirectory().toString()));
        String endpoint = args.string("endpoint", null);
        boolean insecure = args.flag("insecure-no-checksum");
        boolean json = args.flag("json");
        String tokenFile = args.string("token-file", null);
        args.rejectUnknown();

        ModelDownloader.Builder b = ModelDownloader.builder().environment(System.getenv()).allowUnverified(insecure);
        if (endpoint != null) {
            try {
                b.endpoint(URI.create(endpoint));
            } catch (IllegalArgumentException e) {
                throw new Args.UsageException("--endpoint: " + e.getMessage());
            }
        }
        if (tokenFile != null) {
            try {
                b.token(Files.readString(Path.of(tokenFile), StandardCharsets.UTF_8).strip());
            } catch (IOException | InvalidPathException e) {
                throw new Args.UsageException("--token-file " + tokenFile + ": cannot read it (" + e.getMessage() + ")");
            }
        }
        ModelDownloader d = b.build();
        if (list) {
            if (!names.isEmpty()) {
                throw new Args.UsageException("--list takes no model name");
            }
            for (ModelSpec s : d.registry().all()) {
                out.printf(Locale.ROOT, "%-12s %s%s%n", s.name(), s.description(),
                        s.files().stream().allMatch(f -> f.sha256() != null) ? ", SHA-256 pinned" : "");
            }
            return 0;
        }
        if (names.size() != 1) {
            throw new Args.UsageException(names.isEmpty() ? "which model? give a NAME (see download --list) or ORG/REPO[:FILE]"
                    : "one model at a time, got " + names);
        }
        if (insecure) {
            err.println("warning: --insecure-no-checksum: files with no known SHA-256 are accepted unverified");
        }
        ResolvedModel m;
        try {
            m = d.ensure(names.getFirst(), dir, new BarListener(err));
        } catch (DownloadException e) {
            err.println("error: " + e.getMessage());
            return 1;
        }
        boolean hub = HubReference.looksLike(names.getFirst());
        if (json) {
            List<Object> files = new ArrayList<>();
            for (ResolvedModel.FileStatus f : m.files()) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("path", f.path().toString());
                o.put("sha256", f.sha256());
                o.put("verification", f.verification().name().toLowerCase(Locale.ROOT));
                o.put("downloaded", f.downloaded());
                files.add(o);
            }
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("name", m.name());
            o.put("model", m.model().toString());
            o.put("tokenizer", m.tokenizer() == null ? null : m.tokenizer().toString());
            o.put("files", files);
            out.println(Json.write(o));
        } else {
            for (ResolvedModel.FileStatus f : m.files()) {
                out.printf(Locale.ROOT, "%s  %s (%s, %s)%n", f.sha256(), f.path(), f.downloaded() ? "downloaded" : "present",
                        switch (f.verification()) {
                            case PINNED -> "SHA-256 pinned in the registry";
                            case LISTED -> "hash listed by the Hub";
                            case SERVER -> "SHA-256 reported by the server";
                            case RECORDED -> "SHA-256 recorded at download";
                            case NONE -> "NOT VERIFIED";
                        });
            }
            if (hub) {
                out.println("model id " + m.name() + "; serve it: PAGEWARDEN_MODEL_PATH=" + m.model());
            } else {
                out.println("run it: generate --model " + m.model() + " --tokenizer " + m.tokenizer() + " --prompt \"Once upon a time\"");
            }
        }
        return 0;
    }

    /** One progress bar per file on stderr; notices as plain lines. */
    private static final class BarListener implements ProgressListener {
        private final PrintStream err;
        private String file;
        private LongConsumer bar = done -> { };

        BarListener(PrintStream err) {
            this.err = err;
        }

        @Override
        public void progress(String f, long done, long total) {
            if (!f.equals(file)) {
                file = f;
                bar = total > 0 ? ProgressBar.forStderr(err, f, BAR_MIN_BYTES).apply(total) : bytes -> { };
            }
            bar.accept(done);
        }

        @Override
        public void message(String line) {
            err.println(line);
        }
    }
}
