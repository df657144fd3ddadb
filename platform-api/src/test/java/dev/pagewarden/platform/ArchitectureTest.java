package dev.pagewarden.platform;

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

/** Feature packages of the platform build on each other in one direction only, and on the engine's public API alone. */
@AnalyzeClasses(packages = "dev.pagewarden.platform", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    @ArchTest
    static final ArchRule featurePackagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.platform.(*)..")
            .should().beFreeOfCycles();

    /**
     * The pools, backends, workers and step guard are the engine's own: the platform sees snapshots and events,
     * plus the cluster engine of the transport module and the downloader.
     */
    @ArchTest
    static final ArchRule usesOnlyTheEnginesPublicApi = noClasses()
            .that().resideInAPackage("dev.pagewarden.platform..")
            .should().dependOnClassesThat(resideInAPackage("dev.pagewarden.core..")
                    .and(not(resideInAnyPackage(EngineApi.PACKAGES)))
                    .and(not(resideInAnyPackage("dev.pagewarden.core.cluster..", "dev.pagewarden.core.download.."))))
            .because("only the packages named in EngineApi are the engine's public API");

    /** The serving artifact holds no lab: an installed lab is found through the engine's {@code core.faultlab} SPI. */
    @ArchTest
    static final ArchRule doesNotDependOnTheLab = noClasses()
            .that().resideInAPackage("dev.pagewarden.platform..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.lab..")
            .because("the lab is a jar of its own, installed deliberately and loaded only in lab mode");

    /** The platform serves the admin UI but compiles against the incident domain only (admin-ui is a runtime dependency). */
    @ArchTest
    static final ArchRule neverTheAdminUi = noClasses()
            .that().resideInAPackage("dev.pagewarden.platform..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.adminui..")
            .because("what the platform needs of the admin UI comes through dev.pagewarden.incident.AdminAccess");
}
