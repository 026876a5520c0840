/**
 * Serves an allocator's decisions over HTTP to scrapers that are not JVM programs: Prometheus HTTP
 * service discovery per collector, and the OpenTelemetry target allocator's endpoints.
 *
 * <p>The public types are the pieces an embedder reuses: {@link
 * dev.apportion.allocation.server.AllocationServer} (the endpoints over any {@link
 * dev.apportion.allocation.Allocator}), {@link dev.apportion.allocation.server.TargetSource} (file
 * SD, HTTP SD and Prometheus {@code /api/v1/targets} adapters), {@link
 * dev.apportion.allocation.server.TargetFeed} (polls sources into an allocator) and {@link
 * dev.apportion.allocation.server.PollMembership} (collectors known from their own polls). {@link
 * dev.apportion.allocation.server.Main} runs the whole service from one YAML file; everything else
 * is package-private. docs/server.md describes the service.
 */
package dev.apportion.allocation.server;
