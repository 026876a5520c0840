/** Property-based testing of allocation invariants (see {@code docs/testing.md}). */
package dev.apportion.allocation.testkit;
