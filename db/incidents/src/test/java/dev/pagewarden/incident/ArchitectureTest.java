package dev.pagewarden.incident;

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
 * The incident domain's feature packages build on each other in one direction only; the platform and the
 * admin UI build on it, never the other way; the engine only through its public API.
 */
@AnalyzeClasses(packages = "dev.pagewarden.incident", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    @ArchTest
    static final ArchRule featurePackagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.incident.(*)..")
            .should().beFreeOfCycles();

    @ArchTest
    static final ArchRule belowThePlatformAndTheAdminUi = noClasses()
            .that().resideInAPackage("dev.pagewarden.incident..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.pagewarden.adminui..", "dev.pagewarden.platform..")
            .because("the platform and the admin UI use the incident domain; what it needs from them comes through"
                    + " PlatformPort and AdminAccess");

    @ArchTest
    static final ArchRule usesOnlyTheEnginesPublicApi = noClasses()
            .that().resideInAPackage("dev.pagewarden.incident..")
            .should().dependOnClassesThat(resideInAPackage("dev.pagewarden.core..")
                    .and(not(resideInAnyPackage(EngineApi.PACKAGES))))
            .because("only the packages named in EngineApi are the engine's public API");
}
