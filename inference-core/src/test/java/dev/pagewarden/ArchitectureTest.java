package dev.pagewarden;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

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
}
