/**
 * The tenant's side of published disclosures on the tenant API: its incident notices ({@code GET /v1/notices})
 * and the webhook that receives them ({@code PUT} and {@code DELETE /v1/webhook}).
 */
package dev.pagewarden.platform.notice;
