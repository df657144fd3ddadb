package dev.pagewarden.adminui.web;

import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.webjars.WebJarVersionLocator;
import reactor.core.publisher.Mono;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;

/**
 * The UI's few static files (stylesheet, htmx from its webjar), read into memory once at start:
 * serving them never reads a jar on an event-loop thread.
 */
@Controller
class Assets {
    private record Asset(byte[] bytes, MediaType type) {
    }

    private final Map<String, Asset> assets;

    Assets() {
        String htmx = new WebJarVersionLocator().fullPath("htmx.org", "dist/htmx.min.js");
        if (htmx == null) {
            throw new IllegalStateException("the htmx.org webjar is missing from the classpath");
        }
        this.assets = Map.of(
                "admin.css", new Asset(read("ui/admin.css"), new MediaType("text", "css")),
                "htmx.min.js", new Asset(read(htmx), new MediaType("text", "javascript")),
                "favicon.svg", new Asset(read("ui/favicon.svg"), new MediaType("image", "svg+xml")),
                "report.js", new Asset(read("ui/report.js"), new MediaType("text", "javascript")),
                "connection.js", new Asset(read("ui/connection.js"), new MediaType("text", "javascript")));
    }

    private static byte[] read(String path) {
        try (InputStream in = Assets.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing UI asset " + path);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @GetMapping("/admin/assets/{name}")
    Mono<ResponseEntity<byte[]>> asset(@PathVariable String name) {
        Asset a = assets.get(name);
        if (a == null) {
            return Mono.just(ResponseEntity.notFound().build());
        }
        return Mono.just(ResponseEntity.ok().contentType(a.type()).cacheControl(CacheControl.maxAge(Duration.ofHours(1)))
                .body(a.bytes()));
    }
}
