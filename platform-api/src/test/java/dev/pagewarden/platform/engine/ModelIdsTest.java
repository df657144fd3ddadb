package dev.pagewarden.platform.engine;

import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Model ids: what clients may send and what the platform may be configured with. */
class ModelIdsTest {

    @Test
    void idsArePrintableTokensOfBoundedLength() {
        for (String ok : new String[]{"stories260K", "meta-llama/Llama-3.1-8B", "org:model_v1.2"}) {
            assertThat(ModelIds.valid(ok)).as(ok).isTrue();
        }
        for (String bad : new String[]{"", "a b", "a\u0000b", "line\nbreak", "caf\u00e9", "x".repeat(129), null}) {
            assertThat(ModelIds.valid(bad)).as(String.valueOf(bad)).isFalse();
        }
        assertThat(ModelIds.valid("x".repeat(128))).isTrue();
    }

    @Test
    void anInvalidConfiguredIdStopsTheStartNamingTheProperty() {
        var model = new PagewardenProperties.Model(TestModels.stories260K(), TestModels.tok512(), "bad id\u0000", null, null);
        assertThatThrownBy(() -> ModelSource.of(model)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("pagewarden.model.id").hasMessageContaining("not a valid model id")
                .hasMessageNotContaining("\u0000");
        var named = new PagewardenProperties.Model(null, null, "x".repeat(200), "stories260K", null);
        assertThatThrownBy(() -> ModelSource.of(named)).hasMessageContaining("pagewarden.model.id");
        assertThat(ModelSource.of(new PagewardenProperties.Model(TestModels.stories260K(), TestModels.tok512(), null,
                null, null))).isEqualTo(new ModelSource.Local(TestModels.stories260K(), TestModels.tok512(), "stories260K"));
    }

    @Test
    void aHuggingFaceFolderIsServedUnderItsWholeName(@TempDir Path home) throws Exception {
        Path folder = Files.createDirectories(home.resolve("Qwen3-0.6B"));
        assertThat(ModelSource.of(new PagewardenProperties.Model(folder, null, null, null, null)))
                .isEqualTo(new ModelSource.Local(folder, null, "Qwen3-0.6B"));
        var missing = new PagewardenProperties.Model(home.resolve("absent"), null, null, null, null);
        assertThatThrownBy(() -> ModelSource.of(missing)).hasMessageContaining("PAGEWARDEN_MODEL_PATH")
                .hasMessageContaining("is not a readable file or folder");
    }
}
