package dev.pagewarden.platform.testing;

import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Checks the real-model fixture before Spring starts the platform: missing, the class fails under
 * CI and is skipped (saying why) elsewhere, instead of failing inside context start-up.
 */
public final class ModelRequired implements BeforeAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        TestModels.stories260K();
        TestModels.tok512();
    }
}
