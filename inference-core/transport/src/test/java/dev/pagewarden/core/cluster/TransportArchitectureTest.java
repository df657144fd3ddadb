package dev.pagewarden.core.cluster;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The transport module: the wire ({@code core.transfer.net}) below the engine nodes and the cluster engine
 * ({@code core.cluster}); the engine itself never sees either.
 */
@AnalyzeClasses(packages = {"dev.pagewarden.core.cluster", "dev.pagewarden.core.transfer.net"},
        importOptions = ImportOption.DoNotIncludeTests.class)
final class TransportArchitectureTest {

    @ArchTest
    static final ArchRule theWireDoesNotKnowTheNodes = noClasses()
            .that().resideInAPackage("dev.pagewarden.core.transfer.net..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.core.cluster..")
            .because("frames, TLS and the control wire are the layer the nodes are built on");

    @ArchTest
    static final ArchRule noLabNoCommandLine = noClasses()
            .should().dependOnClassesThat().resideInAnyPackage("dev.pagewarden.lab..", "dev.pagewarden.cli..", "dev.pagewarden.command..")
            .because("engine nodes serve tenants: no lab, and the node command builds on them, not the reverse");

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.core.(**)")
            .should().beFreeOfCycles();
}
