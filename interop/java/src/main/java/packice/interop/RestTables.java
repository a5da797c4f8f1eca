package packice.interop;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.Tables;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.util.JsonUtil;

/**
 * Tables behind an Iceberg REST catalog, named as packice names them:
 * {@code rest+http://host:port/<namespace>/<table>} (a dotted namespace is multi-level). Java's own
 * {@link RESTCatalog} talks to the server; the client's extra catalog properties (FileIO settings for
 * S3, say) come as a JSON object in the environment variable {@value #PROPERTIES_ENV}.
 */
final class RestTables implements Tables {
  static final String PROPERTIES_ENV = "PACKICE_REST_CATALOG_PROPERTIES";

  private final Map<String, RESTCatalog> catalogs = new HashMap<>();

  static boolean isRest(String name) {
    return name.startsWith("rest+http://") || name.startsWith("rest+https://");
  }

  @Override
  public Table create(
      Schema schema, PartitionSpec spec, SortOrder order, Map<String, String> properties, String name) {
    Name n = parse(name);
    RESTCatalog catalog = catalog(n.uri);
    try {
      catalog.createNamespace(n.table.namespace());
    } catch (AlreadyExistsException e) {
      // another table in the same namespace made it
    }
    return catalog
        .buildTable(n.table, schema)
        .withPartitionSpec(spec)
        .withSortOrder(order)
        .withProperties(properties)
        .create();
  }

  @Override
  public Table load(String name) {
    Name n = parse(name);
    return catalog(n.uri).loadTable(n.table);
  }

  @Override
  public boolean exists(String name) {
    Name n = parse(name);
    return catalog(n.uri).tableExists(n.table);
  }

  private RESTCatalog catalog(String uri) {
    return catalogs.computeIfAbsent(
        uri,
        u -> {
          Map<String, String> props = new HashMap<>(environmentProperties());
          props.put(CatalogProperties.URI, u);
          RESTCatalog catalog = new RESTCatalog();
          catalog.setConf(Harness.conf());
          catalog.initialize("packice-interop", props);
          return catalog;
        });
  }

  private static Map<String, String> environmentProperties() {
    String json = System.getenv(PROPERTIES_ENV);
    Map<String, String> props = new HashMap<>();
    if (json == null || json.isEmpty()) {
      return props;
    }
    try {
      JsonNode node = JsonUtil.mapper().readTree(json);
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        props.put(e.getKey(), e.getValue().asText());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(PROPERTIES_ENV + " is not a JSON object", e);
    }
    return props;
  }

  private record Name(String uri, TableIdentifier table) {}

  /** {@code rest+http://host:port/ns/table} → ({@code http://host:port}, ns.table). */
  private static Name parse(String name) {
    URI uri = URI.create(name.substring("rest+".length()));
    String[] parts = uri.getRawPath().replaceFirst("^/", "").split("/");
    if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
      throw new IllegalArgumentException(
          "REST table names are rest+http(s)://<host:port>/<namespace>/<table>: " + name);
    }
    String base = uri.getScheme() + "://" + uri.getRawAuthority();
    return new Name(base, TableIdentifier.of(Namespace.of(parts[0].split("\\.")), parts[1]));
  }
}
