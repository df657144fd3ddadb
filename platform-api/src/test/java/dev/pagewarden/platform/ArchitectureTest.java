package dev.pagewarden.platform;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** Feature packages of the platform build on each other in one direction only. */
@AnalyzeClasses(packages = "dev.pagewarden.platform", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    @ArchTest
    static final ArchRule featurePackagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.platform.(*)..")
            .should().beFreeOfCycles();
}
