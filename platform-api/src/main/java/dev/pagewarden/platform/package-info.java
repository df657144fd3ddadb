/**
 * The Pagewarden platform application. Packages follow a request: {@code security} (who is calling),
 * {@code completion} (the OpenAI-compatible API), {@code engine} (admission, prefill, transfer,
 * decode, behind one service), {@code audit} (lineage and receipts), {@code tenant} and
 * {@code admin} (operators), {@code ops} (health, metrics, shutdown).
 */
package dev.pagewarden.platform;
