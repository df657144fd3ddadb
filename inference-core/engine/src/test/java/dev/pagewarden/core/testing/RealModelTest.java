package dev.pagewarden.core.testing;

import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.BeforeAll;

/**
 * Base of the tests that run the real stories260K model. The model is mapped once per test JVM and
 * shared read-only by every engine the tests start (engines never write weights); a missing fixture
 * skips, or under CI=true fails, the class as {@link TestModels} decides.
 */
public abstract class RealModelTest {
    private static LoadedModel shared;

    protected static LoadedModel model;

    @BeforeAll
    static void mapRealModel() {
        model = stories();
    }

    /** The shared stories260K model with its tok512 vocabulary. */
    public static synchronized LoadedModel stories() {
        if (shared == null) {
            shared = ModelLoader.load(TestModels.stories260K(), TestModels.tok512());
        }
        return shared;
    }
}
