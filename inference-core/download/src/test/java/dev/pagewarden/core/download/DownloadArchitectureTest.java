package dev.pagewarden.core.download;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The downloader fetches and verifies files; it knows nothing of the engine that later loads them. */
@AnalyzeClasses(packages = "dev.pagewarden.core.download", importOptions = ImportOption.DoNotIncludeTests.class)
final class DownloadArchitectureTest {

    @ArchTest
    static final ArchRule dependsOnNoOtherPagewardenCode = noClasses()
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden..")
            .andShould().dependOnClassesThat().resideOutsideOfPackages("dev.pagewarden.core.download..", "java..", "javax..",
                    "com.fasterxml.jackson..")
            .because("model fetching is a library of its own: the platform and the command line call it");
}
