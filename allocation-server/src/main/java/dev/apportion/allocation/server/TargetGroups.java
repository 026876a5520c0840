package dev.apportion.allocation.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The shared Jackson mappers for trees of small documents (the config, tests). Target sources do
 * not use them: they parse as they read ({@link TargetReader}).
 */
final class TargetGroups {
  static final ObjectMapper JSON = new ObjectMapper();
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private TargetGroups() {}
}
