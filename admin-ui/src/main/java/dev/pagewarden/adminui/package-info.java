/**
 * The admin web UI (Thymeleaf + htmx), served by the platform at {@code /admin}: package by feature
 * (users, audit, incident, overview, disclosure, tenants, lab, status, web), over the incident domain
 * ({@code dev.pagewarden.incident}). Platform internals are reached only through
 * {@link dev.pagewarden.incident.PlatformPort}, which the platform implements.
 */
package dev.pagewarden.adminui;
