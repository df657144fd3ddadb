package dev.pagewarden.platform.testing;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.nio.file.Path;

/** The ordinary platform most tests share: no lab faults, an admission queue of two (so overload is reachable). */
@TestPropertySource(properties = "pagewarden.engine.max-queue=2")
public abstract class PlatformTest extends PlatformTestBase {
    private static final Path HOME = tempHome();

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }
}
