package dev.pagewarden;

import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.engine.EngineApi;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.sequence.Sequence;

import java.util.stream.Stream;

/**
 * Layering of the engine module: the serving engine ({@code dev.pagewarden.core}) stands on its
 * own; the incident-replay lab ({@code dev.pagewarden.lab}) reaches it only through its fault hooks,
 * and the command line ({@code dev.pagewarden.cli}: benches, tools) sits on top of both.
 */
@AnalyzeClasses(packages = "dev.pagewarden", importOptions = ImportOption.DoNotIncludeTests.class)
final class ArchitectureTest {

    /** The serving path must not pull in benches or tools. */
    @ArchTest
    static final ArchRule engineDoesNotDependOnCommandLine = noClasses()
            .that().resideInAPackage("dev.pagewarden.core..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.cli..")
            .because("the engine is served without the command line; benches and tools build on it, not the reverse");

    /** No lab type, switch or branch in the serving path: the lab implements the engine's fault hooks. */
    @ArchTest
    static final ArchRule engineDoesNotDependOnTheLab = noClasses()
            .that().resideInAPackage("dev.pagewarden.core..")
            .should().dependOnClassesThat().resideInAPackage("dev.pagewarden.lab..")
            .because("fault injection reaches the engine only through core.fault.FaultHooks");

    @ArchTest
    static final ArchRule topLevelTreesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.(*)..")
            .should().beFreeOfCycles();

    /** Every package of the module (engine, lab, command line) is a slice of its own, and they form no cycle. */
    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices()
            .matching("dev.pagewarden.(**)")
            .should().beFreeOfCycles();

    /** Every forward step goes through the step guard, which checks the reads and records the writes. */
    @ArchTest
    static final ArchRule onlyTheStepGuardRunsABackendStep = noClasses()
            .that().resideOutsideOfPackage("dev.pagewarden.core.step..")
            .and().resideOutsideOfPackage("dev.pagewarden.core.backend..")
            .should().callMethodWhere(target(name("forward")).and(target(owner(assignableTo(Backend.class)))))
            .because("a caller that runs a backend step itself could skip the read checks or the write marking");

    /** A backend sees its storage and a read-only view of the tags, never the pool it could bypass. */
    @ArchTest
    static final ArchRule backendsDoNotTouchThePool = noClasses()
            .that().resideInAPackage("dev.pagewarden.core.backend..")
            .should().dependOnClassesThat().belongToAnyOf(KvPool.class)
            .because("checks and write records belong to the step guard");

    /** What a request is and how it ends is public API: it must not drag the KV pool or any other internal along. */
    @ArchTest
    static final ArchRule requestPackageDependsOnlyOnTheApi = classes()
            .that().resideInAPackage("dev.pagewarden.core.request..")
            .should().onlyDependOnClassesThat().resideInAnyPackage(
                    Stream.concat(Stream.of("java.."), Stream.of(EngineApi.PACKAGES)).toArray(String[]::new))
            .because("applications build on core.request; the engine's record of a request (core.sequence) stays internal");

    /** Each stage sees a request through its own view of the sequence, so what a stage may touch is written down. */
    @ArchTest
    static final ArchRule stagesSeeTheirViewOfARequest = noClasses()
            .that().resideInAnyPackage("dev.pagewarden.core.admission..", "dev.pagewarden.core.prefill..",
                    "dev.pagewarden.core.decode..", "dev.pagewarden.core.step..")
            .should().dependOnClassesThat().belongToAnyOf(Sequence.class)
            .because("admission, prefill, intake and decode each use the narrow view core.sequence gives them");
}
