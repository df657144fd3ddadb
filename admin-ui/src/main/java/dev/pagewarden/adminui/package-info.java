/**
 * The admin web UI (Thymeleaf + htmx). Not built yet: see the admin-UI issue.
 */
package dev.pagewarden.adminui;
