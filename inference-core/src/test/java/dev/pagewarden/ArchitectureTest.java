package dev.pagewarden;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.Slice;

import java.util.List;

/**
 * Layering of the engine module: the serving engine ({@code dev.pagewarden.core}) stands on its
 * own, the command line ({@code dev.pagewarden.cli}: benches, tools) sits on top of it.
 */
@AnalyzeClasses(packages = "dev.pagewarden", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    /** The serving path must not pull in benches or tools. */
    @ArchTest
    static final ArchRule engineDoesNotDependOnCommandLine = noClasses()
            .that().resideInAPackage("dev.pagewarden.core..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.cli..")
            .because("the engine is served without the command line; benches and tools build on it, not the reverse");

    /** Top-level trees only: the engine's own sub-packages still have cycles to untangle. */
    @ArchTest
    static final ArchRule topLevelTreesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.(*)..")
            .should().beFreeOfCycles();

    /**
     * The engine's model, tokenizer, request and sampling trees stay acyclic, every
     * package a slice of its own: gguf and tokenizer build on model, model.load on all three, request
     * on sampling.
     */
    @ArchTest
    static final ArchRule modelTokenizerRequestAndSamplingPackagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.core.(**)")
            .that(inEngineTrees("model", "tokenizer", "request", "sampling"))
            .should().beFreeOfCycles();

    /** Slices whose package lies in one of the given top-level trees of {@code dev.pagewarden.core}. */
    private static DescribedPredicate<Slice> inEngineTrees(String... trees) {
        List<String> names = List.of(trees);
        return DescribedPredicate.describe("in the engine trees " + names,
                slice -> names.contains(slice.getNamePart(1).split("\\.", 2)[0]));
    }
}
