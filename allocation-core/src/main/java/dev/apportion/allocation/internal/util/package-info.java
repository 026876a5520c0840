/**
 * <b>Internal:</b> small primitive utilities shared by the rings and the engine. Not exported by
 * the module; public only so that other packages of this module can use them. May change in any
 * release.
 */
package dev.apportion.allocation.internal.util;
