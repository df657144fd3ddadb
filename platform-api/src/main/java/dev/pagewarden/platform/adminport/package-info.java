/**
 * The platform side of the admin UI: {@link dev.pagewarden.incident.PlatformPort} implemented over
 * the engine host, safety-event recorder, tenant service and metrics, and the admin API's disclosure workflow.
 */
package dev.pagewarden.platform.adminport;
