/**
 * The platform side of the admin UI: {@link dev.pagewarden.adminui.PlatformPort} implemented over
 * the engine host, safety-event recorder, tenant service and metrics, and the tenant-API endpoints
 * the UI's features add ({@code /v1/notices}, {@code /v1/webhook}).
 */
package dev.pagewarden.platform.adminport;
