package dev.pagewarden.lab;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The lab plugs into the engine's seams and the command SPI; nothing it holds may be needed to serve. */
@AnalyzeClasses(packages = "dev.pagewarden", importOptions = {ImportOption.DoNotIncludeTests.class, LabArchitectureTest.NoTestJars.class})
final class LabArchitectureTest {

    /** The engine's test fixtures reach this module as a test jar once packaged: they are not code that ships. */
    static final class NoTestJars implements ImportOption {
        @Override
        public boolean includes(Location location) {
            return !location.contains("-tests.jar");
        }
    }

    @ArchTest
    static final ArchRule theLabDoesNotDependOnTheCommandLine = noClasses()
            .that().resideInAPackage("dev.pagewarden.lab..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.pagewarden.cli..", "dev.pagewarden.core.cluster..",
                    "dev.pagewarden.core.transfer.net..")
            .because("the replay command is offered through the command SPI; the lab replays the in-process engine");

    @ArchTest
    static final ArchRule nothingElseDependsOnTheLab = noClasses()
            .that().resideOutsideOfPackage("dev.pagewarden.lab..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.lab..")
            .because("the lab is installed deliberately; the engine reaches it only through its fault hooks and SPIs");

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.(**)")
            .should().beFreeOfCycles();
}
