package dev.pagewarden.adminui;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.pagewarden.core.engine.EngineApi;

/**
 * The admin UI's feature packages build on each other in one direction only; it reaches the platform through its port,
 * the engine through its public API only, and never the lab.
 */
@AnalyzeClasses(packages = "dev.pagewarden.adminui", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    @ArchTest
    static final ArchRule featurePackagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.adminui.(*)..")
            .should().beFreeOfCycles();

    @ArchTest
    static final ArchRule usesOnlyTheEnginesPublicApi = noClasses()
            .that().resideInAPackage("dev.pagewarden.adminui..")
            .should().dependOnClassesThat(resideInAPackage("dev.pagewarden.core..")
                    .and(not(resideInAnyPackage(EngineApi.PACKAGES))))
            .because("only the packages named in EngineApi are the engine's public API");

    @ArchTest
    static final ArchRule labOnlyThroughThePlatformPort = noClasses()
            .that().resideInAPackage("dev.pagewarden.adminui..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.lab..")
            .because("lab runs go through PlatformPort, which the platform implements");
}
