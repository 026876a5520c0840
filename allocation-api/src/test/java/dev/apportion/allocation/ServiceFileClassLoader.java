package dev.apportion.allocation;

import dev.apportion.allocation.spi.AllocationStrategyProvider;
import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * A class loader that delegates everything to its parent except the service files of
 * {@link AllocationStrategyProvider}, for which it answers with a fixed list. Installed as the
 * thread's context class loader (which {@link java.util.ServiceLoader#load(Class)} uses), it lets
 * a test decide which providers {@link Allocators} sees.
 */
final class ServiceFileClassLoader extends ClassLoader {
  static final String SERVICE_FILE =
      "META-INF/services/" + AllocationStrategyProvider.class.getName();

  private final List<URL> serviceFiles;

  ServiceFileClassLoader(ClassLoader parent, List<URL> serviceFiles) {
    super(parent);
    this.serviceFiles = List.copyOf(serviceFiles);
  }

  @Override
  public Enumeration<URL> getResources(String name) throws IOException {
    if (SERVICE_FILE.equals(name)) {
      return Collections.enumeration(serviceFiles);
    }
    return super.getResources(name);
  }

  @Override
  public URL getResource(String name) {
    if (SERVICE_FILE.equals(name)) {
      return serviceFiles.isEmpty() ? null : serviceFiles.get(0);
    }
    return super.getResource(name);
  }
}
