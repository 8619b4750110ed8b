import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;

/**
 * bench/catalog-browsing's pgjdbc client: times DatabaseMetaData calls on schema `wide` through
 * one connection and prints one line per call: `<name> <milliseconds> <rows>`. Each call runs
 * three times; the line gives the fastest (the first also warms the driver's own caches).
 *
 * Usage: java -cp /usr/share/java/postgresql.jar CatalogBrowse.java host port database user password table
 */
public final class CatalogBrowse {
  private interface Call {
    ResultSet run(DatabaseMetaData m) throws SQLException;
  }

  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[2] + "?sslmode=disable";
    Properties props = new Properties();
    props.setProperty("user", args[3]);
    props.setProperty("password", args[4]);
    String table = args[5];
    try (Connection c = DriverManager.getConnection(url, props)) {
      DatabaseMetaData m = c.getMetaData();
      time(m, "getTables", x -> x.getTables(null, "wide", "%", new String[] {"TABLE"}));
      time(m, "getColumns(table)", x -> x.getColumns(null, "wide", table, "%"));
      time(m, "getColumns(schema)", x -> x.getColumns(null, "wide", "%", "%"));
      time(m, "getPrimaryKeys", x -> x.getPrimaryKeys(null, "wide", table));
    }
  }

  private static void time(DatabaseMetaData m, String name, Call call) throws SQLException {
    double best = Double.MAX_VALUE;
    int rows = 0;
    for (int i = 0; i < 3; i++) {
      long started = System.nanoTime();
      rows = 0;
      try (ResultSet r = call.run(m)) {
        while (r.next()) rows++;
      }
      best = Math.min(best, (System.nanoTime() - started) / 1e6);
    }
    System.out.println(name + " " + best + " " + rows);
  }
}
