package dev.pagewarden.cuda;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The GPU backend plugs into the engine's backend SPI and the command SPI; it never reaches the command line or the lab. */
@AnalyzeClasses(packages = "dev.pagewarden.cuda", importOptions = ImportOption.DoNotIncludeTests.class)
final class CudaArchitectureTest {

    @ArchTest
    static final ArchRule noCommandLineNoLab = noClasses()
            .should().dependOnClassesThat().resideInAnyPackage("dev.pagewarden.cli..", "dev.pagewarden.lab..")
            .because("gpu-check is offered through the command SPI; the lab is never part of a serving backend");

    @ArchTest
    static final ArchRule theBackendDoesNotTouchThePool = noClasses()
            .that().resideInAPackage("dev.pagewarden.cuda")
            .and().haveSimpleNameNotStartingWith("GpuChecks")
            .should().dependOnClassesThat().haveFullyQualifiedName("dev.pagewarden.core.kv.KvPool")
            .because("reads are checked and writes recorded by the engine's step guard, before the backend runs");

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.cuda.(**)")
            .should().beFreeOfCycles();
}
