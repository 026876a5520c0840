/**
 * The service-provider interface through which {@link dev.apportion.allocation.Allocators} finds
 * allocation strategies by name. Users who only use the built-in strategies never touch it.
 */
package dev.apportion.allocation.spi;
