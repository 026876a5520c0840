/**
 * <b>Internal:</b> the allocation engine shared by the built-in strategies. Not exported by the
 * module; public only so that the strategy package can use it. May change in any release.
 */
package dev.apportion.allocation.internal.engine;
