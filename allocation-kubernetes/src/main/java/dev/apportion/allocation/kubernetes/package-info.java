/**
 * Optional Kubernetes integration: {@link
 * dev.apportion.allocation.kubernetes.KubernetesCollectorSource} watches the collector pods with
 * the fabric8 Kubernetes client and keeps an {@link dev.apportion.allocation.Allocator} (or any
 * consumer of the collector set) up to date. Lives in its own module, {@code allocation-kubernetes},
 * so that {@code allocation-core} stays free of Kubernetes. See docs/kubernetes.md.
 *
 * @since 0.1.0
 */
package dev.apportion.allocation.kubernetes;
