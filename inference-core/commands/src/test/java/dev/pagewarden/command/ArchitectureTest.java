package dev.pagewarden.command;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The command SPI stands alone: the engine jar, the GPU backend and the lab plug commands into it, never the reverse. */
@AnalyzeClasses(packages = "dev.pagewarden.command", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    @ArchTest
    static final ArchRule dependsOnNoOtherPagewardenCode = classes()
            .should().onlyDependOnClassesThat().resideInAnyPackage("dev.pagewarden.command..", "java..", "com.fasterxml.jackson..")
            .because("the GPU backend and the lab implement commands without depending on the command line or each other");
}
