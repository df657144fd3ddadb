package dev.pagewarden.db;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The database module's packages build on each other in one direction only, on plain JDBC, below every application. */
@AnalyzeClasses(packages = "dev.pagewarden.db", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.db.(*)..")
            .should().beFreeOfCycles();

    @ArchTest
    static final ArchRule plainJdbcBelowTheApplications = noClasses()
            .that().resideInAPackage("dev.pagewarden.db..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "dev.pagewarden.platform..",
                    "dev.pagewarden.adminui..", "dev.pagewarden.incident..")
            .because("the platform, the admin UI and the incident domain build on the database module, not the other way");
}
