package dev.apportion.allocation.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several replicas of the server (copies of the service behind one address, for high
 * availability; not the {@code strategy.replicas} of a target) given the same inputs serve
 * identical answers with a deterministic strategy: that is the service's high availability, with
 * no leader election. The server replicas here are given their inputs in different orders (targets
 * in another file order, collectors listed in another order) and still agree byte for byte, with
 * one owner per target and with two.
 */
class ServerReplicasTest {
  @TempDir Path dir;

  private Path config(String name, String strategy, String files, String collectors) throws Exception {
    Path c = dir.resolve(name);
    Files.writeString(
        c,
        """
        listen: 127.0.0.1:0
        strategy: %s
        refreshInterval: 1h
        targets:
          - fileSd: {job: nodes, files: %s}
        collectors:
          static: %s
        scrapeConfigs:
          nodes: {scrape_interval: 15s}
        """
            .formatted(strategy, files, collectors));
    return c;
  }

  @Test
  void serverReplicasWithTheSameInputsServeIdenticalAnswers() throws Exception {
    for (String strategy : List.of("consistent-hashing", "rendezvous", "per-node")) {
      List<List<String>> answers = twoServers(strategy);
      assertEquals(answers.get(0), answers.get(1), strategy);
      assertTrue(answers.get(0).get(0).length() > 100, answers.get(0).get(0));
    }
  }

  @Test
  void serverReplicasAgreeWhenEveryTargetIsOnTwoCollectors() throws Exception {
    for (String strategy :
        List.of("{name: consistent-hashing, replicas: 2}", "{name: per-node, replicas: 2}")) {
      List<List<String>> answers = twoServers(strategy);
      assertEquals(answers.get(0), answers.get(1), strategy);
      int listed = 0;
      for (int c = 0; c < 4; c++) {
        listed += count(answers.get(0).get(2 * c));
      }
      assertEquals(2 * 300, listed, strategy + ": each of the 300 targets served to two collectors");
    }
  }

  /** How many target addresses an HTTP SD answer lists. */
  private static int count(String httpSd) {
    int n = 0;
    for (com.fasterxml.jackson.databind.JsonNode g : new Http.Response(200, httpSd).json()) {
      n += g.get("targets").size();
    }
    return n;
  }

  /** The answers of two servers given the same inputs in other orders, for {@code strategy}. */
  private List<List<String>> twoServers(String strategy) throws Exception {
    StringBuilder a = new StringBuilder("[");
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < 300; i++) {
      String group =
          "{\"targets\":[\"10.0.%d.%d:9100\"],\"labels\":{\"__meta_kubernetes_pod_node_name\":\"n%d\",\"rack\":\"r%d\"}}"
              .formatted(i / 250, i % 250, i % 7, i % 3);
      StringBuilder file = i < 150 ? a : b;
      file.append(file.length() > 1 ? "," : "").append(group);
    }
    Files.writeString(dir.resolve("a.json"), a.append(']'));
    Files.writeString(dir.resolve("b.json"), b.append(']'));
    String collectors = "[{name: c1, node: n1}, {name: c2, node: n2}, {name: c3, node: n3}, {name: c4}]";
    String reversed = "[{name: c4}, {name: c3, node: n3}, {name: c2, node: n2}, {name: c1, node: n1}]";
    List<String> answers1;
    List<String> answers2;
    try (Service one = new Service(ServerConfig.read(config("one.yaml", strategy, "[a.json, b.json]", collectors)));
        Service two = new Service(ServerConfig.read(config("two.yaml", strategy, "[b.json, a.json]", reversed)))) {
      one.start();
      two.start();
      one.feed().refresh();
      two.feed().refresh();
      answers1 = answers(one.port());
      answers2 = answers(two.port());
    }
    return List.of(answers1, answers2);
  }

  private static List<String> answers(int port) {
    String base = "http://127.0.0.1:" + port;
    List<String> out = new ArrayList<>();
    for (String c : List.of("c1", "c2", "c3", "c4", "nobody")) {
      out.add(Http.get(base + "/targets?collector=" + c).body());
      out.add(Http.get(base + "/jobs/nodes/targets?collector_id=" + c).body());
    }
    out.add(Http.get(base + "/jobs").body());
    out.add(Http.get(base + "/jobs/nodes/targets").body());
    out.add(Http.get(base + "/scrape_configs").body());
    return out;
  }
}
