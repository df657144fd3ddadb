package dev.pagewarden.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The command line sits on top: it uses the engine, the transport and the downloader, and finds the GPU
 * backend's and the lab's commands at run time, so the engine jar it builds holds no lab.
 */
@AnalyzeClasses(packages = "dev.pagewarden.cli", importOptions = ImportOption.DoNotIncludeTests.class)
final class CliArchitectureTest {

    @ArchTest
    static final ArchRule noLabInTheEngineJar = noClasses()
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.lab..")
            .because("the replay command comes with the lab's jar, through the command SPI");

    @ArchTest
    static final ArchRule theGpuBackendIsFoundNotNamed = noClasses()
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.cuda..")
            .because("backends and their commands are found with ServiceLoader; the CPU-only build runs the same command line");

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.cli.(**)")
            .should().beFreeOfCycles();
}
