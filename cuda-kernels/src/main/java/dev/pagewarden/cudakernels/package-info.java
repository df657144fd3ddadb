/**
 * The JCuda GPU backend. Not built yet: see the GPU-backend issue. Today this module only assembles
 * the runnable engine jar ({@code target/pagewarden-engine.jar}) so that the GPU backend lands in it
 * as soon as it exists.
 */
package dev.pagewarden.cudakernels;
