/**
 * The Spring Boot WebFlux platform: tenant API, admin API, wiring. Not built yet: see the platform issue.
 */
package dev.pagewarden.platformapi;
