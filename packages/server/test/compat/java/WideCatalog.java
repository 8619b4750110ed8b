import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The wide-catalog test's pgjdbc program: DatabaseMetaData over a schema of thousands of tables,
 * one JSON line per step ({"step": ..., "ok": true, "value": ...} or {"step": ..., "ok": false,
 * "sqlState": ..., "error": ...}): how many tables and columns the schema lists, and the columns
 * of one table by name.
 *
 * Usage: java -cp /usr/share/java/postgresql.jar WideCatalog.java host port database user
 *   password table hiddenTable
 */
public final class WideCatalog {
  private interface Step {
    String run(DatabaseMetaData m) throws SQLException;
  }

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.setProperty("user", args[3]);
    props.setProperty("password", args[4]);
    String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[2] + "?sslmode=disable";
    try (Connection c = DriverManager.getConnection(url, props)) {
      DatabaseMetaData m = c.getMetaData();
      step("tables", x -> String.valueOf(count(x.getTables(null, "wide", "%", new String[] {"TABLE"}))), m);
      step("schemaColumns", x -> String.valueOf(count(x.getColumns(null, "wide", "%", "%"))), m);
      step("tableColumns", x -> names(x.getColumns(null, "wide", args[5], "%")), m);
      step("hiddenColumns", x -> String.valueOf(count(x.getColumns(null, "wide", args[6], "%"))), m);
    }
  }

  private static void step(String name, Step step, DatabaseMetaData m) {
    try {
      System.out.println("{\"step\":\"" + name + "\",\"ok\":true,\"value\":" + step.run(m) + "}");
    } catch (SQLException e) {
      String message = String.valueOf(e.getMessage()).replace("\\", "\\\\").replace("\"", "\\\"");
      System.out.println("{\"step\":\"" + name + "\",\"ok\":false,\"sqlState\":\"" + e.getSQLState()
          + "\",\"error\":\"" + message.replace("\n", " ") + "\"}");
    }
  }

  private static int count(ResultSet r) throws SQLException {
    int n = 0;
    try (r) {
      while (r.next()) n++;
    }
    return n;
  }

  /** The COLUMN_NAME of every row, as a JSON array (catalog names here are plain). */
  private static String names(ResultSet r) throws SQLException {
    List<String> out = new ArrayList<>();
    try (r) {
      while (r.next()) out.add("\"" + r.getString("COLUMN_NAME") + "\"");
    }
    return "[" + String.join(",", out) + "]";
  }
}
